"""Multilingual knowledge distillation (``--loss distill``): the loss, the parallel pairs, the
teacher, and training on the tiny BERT with a 20-concept en/es/fr KG."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from _cli import run_main
from conftest import build_tiny_bert
from termnorm.encoders import TermEncoder, default_model_path
from termnorm.encoders.folder import prompt_config
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.losses import DistillationLoss
from termnorm.training import TrainConfig
from termnorm.training.objectives import OBJECTIVES
from termnorm.training.parallel import ParallelSampler, parallel_names
from termnorm.training.run import build_trainer
from termnorm.training.teacher import resolve_teacher, teacher_vectors

# 20 concepts: English preferred name, Spanish and French names (a few English synonyms)
PARALLEL = [
    ("fever", "fiebre", "fievre"),
    ("cough", "tos", "toux"),
    ("headache", "cefalea", "cephalee"),
    ("nausea", "nauseas", "nausee"),
    ("rash", "erupcion", "eruption"),
    ("asthma", "asma", "asthme"),
    ("anemia", "anemia", "anemie"),
    ("diabetes", "diabetes", "diabete"),
    ("obesity", "obesidad", "obesite"),
    ("insomnia", "insomnio", "insomnie"),
    ("vomiting", "vomitos", "vomissement"),
    ("diarrhea", "diarrea", "diarrhee"),
    ("pneumonia", "neumonia", "pneumonie"),
    ("stroke", "ictus", "accident vasculaire"),
    ("kidney failure", "insuficiencia renal", "insuffisance renale"),
    ("heart attack", "infarto", "infarctus"),
    ("back pain", "dolor de espalda", "mal de dos"),
    ("hair loss", "caida del cabello", "chute des cheveux"),
    ("dizziness", "mareo", "vertige"),
    ("fatigue", "cansancio", "fatigue"),
]
SYNONYMS = {0: "pyrexia", 15: "myocardial infarction"}


def make_parallel_kg(with_english_only: bool = False) -> KnowledgeGraph:
    """20 concepts ``P:01..P:20``, each with an English preferred name, a Spanish and a French
    name; ``with_english_only`` adds ``P:99`` with an English name only, and ``P:98`` with a
    Spanish name only."""
    concepts, terms = [], []
    for i, (en, es, fr) in enumerate(PARALLEL):
        cid = f"P:{i + 1:02d}"
        concepts.append({"concept_id": cid, "name": en, "semantic_types": [], "alt_ids": []})
        names = [(en, "en", True), (es, "es", False), (fr, "fr", False)]
        if i in SYNONYMS:
            names.append((SYNONYMS[i], "en", False))
        for text, lang, preferred in names:
            terms.append(
                {
                    "concept_id": cid,
                    "term": text,
                    "lang": lang,
                    "source": "fixture",
                    "is_preferred": preferred,
                }
            )
    if with_english_only:
        for cid, text, lang in (("P:99", "gout", "en"), ("P:98", "gota", "es")):
            concepts.append({"concept_id": cid, "name": text, "semantic_types": [], "alt_ids": []})
            terms.append(
                {
                    "concept_id": cid,
                    "term": text,
                    "lang": lang,
                    "source": "fixture",
                    "is_preferred": True,
                }
            )
    return KnowledgeGraph.from_records(concepts, terms, [])


@pytest.fixture()
def parallel_kg() -> KnowledgeGraph:
    return make_parallel_kg()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Teacher vectors cached in the test's own folder."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("TERMNORM_CACHE", str(folder))
    return folder


def _config(base: Path, out: Path, **kw: object) -> TrainConfig:
    defaults: dict[str, object] = dict(
        base_model=base,
        out=out,
        loss="distill",
        steps=20,
        k=16,
        m=2,
        lr=1e-3,
        warmup=2,
        max_length=16,
        device="cpu",
        precision="fp32",
        hard_refresh=4,
        log_every=1,
        checkpoint_every=0,
        seed=3,
        pooling="mean",
        freeze_embeddings=False,  # the tiny BERT has 2 layers: train them all
        freeze_layers=0,
    )
    defaults.update(kw)
    return TrainConfig.from_dict(defaults)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _cosines(student: TermEncoder, teacher: np.ndarray, texts: list[str]) -> np.ndarray:
    """Row-wise cosine of the student's vectors of ``texts`` and the teacher rows."""
    return np.sum(student.encode(texts) * _unit(teacher), axis=1)  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- the loss
def test_the_loss_is_the_mean_squared_distance_to_the_teacher() -> None:
    loss = DistillationLoss()
    student = torch.tensor([[3.0, 4.0], [1.0, 1.0]], requires_grad=True)
    teacher = torch.tensor([[0.0, 0.0], [1.0, 2.0]])
    value = loss(student, teacher)
    assert float(value.detach()) == pytest.approx((25.0 + 1.0) / 2)
    value.backward()
    assert student.grad is not None  # d/ds = 2 (s - t) / N
    torch.testing.assert_close(student.grad, torch.tensor([[3.0, 4.0], [0.0, -1.0]]))
    assert float(loss(teacher, teacher)) == 0.0
    assert float(loss(torch.zeros(0, 2), torch.zeros(0, 2))) == 0.0
    with pytest.raises(ValueError, match="differ in shape"):
        loss(torch.zeros(2, 3), torch.zeros(2, 4))


# ----------------------------------------------------------------------------- the pairs
def test_parallel_names_pivot_on_the_preferred_english_name() -> None:
    names = parallel_names(make_parallel_kg(with_english_only=True))
    assert names.concept_ids[:2] == ["P:01", "P:02"] and "P:98" not in names.concept_ids
    assert names.pivots[0] == "fever" and names.dropped == 1  # P:98 has no English name
    lo, hi = names.offsets[0], names.offsets[1]
    assert sorted(names.texts[lo:hi]) == ["fiebre", "fievre", "pyrexia"]
    gout = names.concept_ids.index("P:99")
    assert gout not in names.with_translation  # English only: a pivot, nothing to pair
    counts = names.counts()
    # a name spelt as its pivot ("anemia", "diabetes" in es, "fatigue" in fr) is no pair
    assert counts["parallel_translations_es"] == 18 and counts["parallel_translations_fr"] == 19
    assert counts["parallel_translations_en"] == 2
    assert counts["parallel_concepts_with_translation"] == 20


def test_a_kg_without_parallel_names_is_refused() -> None:
    kg = make_parallel_kg()
    pivots = kg.terms[kg.terms["is_preferred"]]  # English names only, no synonym
    english = KnowledgeGraph.from_records(kg.concepts, pivots, [])
    with pytest.raises(ValueError, match=r"no parallel names.*languages: en.*several --lang"):
        parallel_names(english)


def test_parallel_batches_are_counter_based(parallel_kg: KnowledgeGraph) -> None:
    names = parallel_names(parallel_kg)
    sampler = ParallelSampler(names, pairs=8, seed=5)
    batch = sampler.batch(3, 1)
    assert batch.terms == sampler.batch(3, 1).terms
    assert batch.terms != sampler.batch(3, 0).terms
    rows = batch.teacher_rows.tolist()
    assert rows[:8] == rows[8:] and len(set(rows[:8])) == 8  # no concept twice in a batch
    for row, pivot, translation in zip(rows[:8], batch.terms[:8], batch.terms[8:], strict=True):
        assert pivot == names.pivots[row]
        lo, hi = names.offsets[row], names.offsets[row + 1]
        assert translation in names.texts[lo:hi]
    assert ParallelSampler(names, pairs=30).batch(0).pairs == 30  # more pairs than concepts


def test_language_balanced_pairs_give_a_small_language_its_share() -> None:
    """30 concepts with Spanish names, 2 with German ones: drawn by concept, German is ~6 % of
    the pairs; drawn by language first (--lang-balanced), about half; each pair is still a
    concept's pivot and one of its own translations."""
    concepts = [{"concept_id": f"X:{i}", "name": f"thing {i}"} for i in range(32)]
    terms = [{"concept_id": f"X:{i}", "term": f"thing {i}", "lang": "en"} for i in range(32)]
    terms += [{"concept_id": f"X:{i}", "term": f"cosa {i}", "lang": "es"} for i in range(30)]
    terms += [{"concept_id": f"X:{i}", "term": f"Ding {i}", "lang": "de"} for i in (30, 31)]
    names = parallel_names(KnowledgeGraph.from_records(concepts, terms))

    def german_share(balanced: bool) -> float:
        sampler = ParallelSampler(names, pairs=16, seed=1, lang_balanced=balanced)
        batches = [sampler.batch(step) for step in range(40)]
        found = [t for b in batches for t in b.terms[b.pairs :]]
        for b in batches:
            for row, pivot, translation in zip(
                b.teacher_rows.tolist()[: b.pairs],
                b.terms[: b.pairs],
                b.terms[b.pairs :],
                strict=True,
            ):
                lo, hi = names.offsets[row], names.offsets[row + 1]
                assert pivot == names.pivots[row] and translation in names.texts[lo:hi]
        return sum(t.startswith("Ding") for t in found) / len(found)

    assert german_share(False) < 0.15
    assert 0.4 < german_share(True) < 0.6


# ----------------------------------------------------------------------------- the teacher
def test_the_teacher_is_the_model_before_vocabulary_extension(tmp_path: Path) -> None:
    base, ext = tmp_path / "base", tmp_path / "ext"
    base.mkdir()
    ext.mkdir()
    assert resolve_teacher(None, None) == default_model_path()
    assert resolve_teacher(None, base) == base
    (ext / "vocabulary_extension.json").write_text(json.dumps({"base_model": str(base)}))
    assert resolve_teacher(None, ext) == base
    assert resolve_teacher(tmp_path, ext) == tmp_path  # --teacher wins
    base.rmdir()
    with pytest.raises(ArtifactMismatchError, match="pass --teacher"):
        resolve_teacher(None, ext)


def test_teacher_vectors_are_pooled_unnormalised_and_cached(
    tiny_bert_path: Path, _cache: Path
) -> None:
    teacher = TermEncoder.load(tiny_bert_path, pooling="mean", max_length=16, device="cpu")
    texts = ["fever", "cough", "fever"]
    first = teacher_vectors(teacher, texts, batch_size=2)
    with torch.no_grad():
        expected = teacher.embed(texts).numpy()  # the tiny BERT has no Dense head
    np.testing.assert_allclose(first, expected, rtol=1e-5, atol=1e-6)
    assert not np.allclose(np.linalg.norm(first, axis=1), 1.0)
    (cached,) = (_cache / "distill-teacher").glob("*.npy")
    np.save(cached, np.zeros_like(first))  # a second call reads the cache, not the model
    assert not teacher_vectors(teacher, texts).any()
    assert teacher_vectors(teacher, texts, cache=False).any()


# ----------------------------------------------------------------------------- training
def test_a_teacher_of_its_own_is_cached_once_and_learnt_by_a_prompted_student(
    tiny_bert_path: Path, parallel_kg: KnowledgeGraph, tmp_path: Path, _cache: Path
) -> None:
    """``--teacher`` another model than the student (MiniLM teaching multilingual-e5): the
    targets are the teacher's vectors of the English names, read without the student's prompt
    and cached once; the student (with a prompt) moves toward them."""
    teacher_path = build_tiny_bert(tmp_path / "teacher", seed=7)
    student_path = TermEncoder.load(tiny_bert_path, device="cpu").save(tmp_path / "student")
    (student_path / "config_sentence_transformers.json").write_text(
        json.dumps(prompt_config("query: "))
    )
    names = parallel_names(parallel_kg)
    teacher = TermEncoder.load(teacher_path, pooling="mean", max_length=16, device="cpu")
    target = teacher_vectors(teacher, names.pivots, cache=False)  # [20, d]: no prompt
    student = TermEncoder.load(student_path, pooling="mean", max_length=16, device="cpu")
    assert student.prompt == "query: " and teacher.prompt == ""
    before = np.mean((student.embed(names.pivots).detach().numpy() - target) ** 2)
    out = tmp_path / "distilled"
    config = _config(student_path, out, teacher=teacher_path, steps=12)
    trainer = build_trainer(config, kg=parallel_kg)
    np.testing.assert_allclose(trainer.objective.teacher.numpy(), target, rtol=0, atol=1e-6)
    trainer.train()
    assert len(list((_cache / "distill-teacher").glob("*.npy"))) == 1
    build_trainer(config.replace(out=tmp_path / "again", steps=1, warmup=0), kg=parallel_kg)
    assert len(list((_cache / "distill-teacher").glob("*.npy"))) == 1  # read, not encoded
    trained = TermEncoder.load(out, pooling="mean", max_length=16, device="cpu")
    assert trained.prompt == "query: "
    after = np.mean((trained.embed(names.pivots).detach().numpy() - target) ** 2)
    assert after < before / 2, (before, after)
    card = json.loads((out / "objective.json").read_text())
    assert card["teacher"] == str(teacher_path)
    assert card["teacher_fingerprint"] == teacher.fingerprint


def test_a_teacher_of_another_dimension_is_refused(
    tiny_bert_path: Path, parallel_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    wide = build_tiny_bert(tmp_path / "wide", hidden_size=48)
    config = _config(tiny_bert_path, tmp_path / "out", teacher=wide)
    with pytest.raises(
        ArtifactMismatchError, match=r"48 dimensions, the student .* 32: the student"
    ):
        build_trainer(config, kg=parallel_kg)


def test_distillation_keeps_english_and_moves_translations_to_it(
    tiny_bert_path: Path, parallel_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    names = parallel_names(parallel_kg)
    teacher = TermEncoder.load(tiny_bert_path, pooling="mean", max_length=16, device="cpu")
    target = teacher_vectors(teacher, names.pivots, cache=False)  # [20, d]
    spanish = [str(t) for t in parallel_kg.terms.query("lang == 'es'")["term"]]
    before_es = _cosines(teacher, target, spanish)
    mutual = _unit(target) @ _unit(target).T
    neighbours = float(mutual[~np.eye(len(mutual), dtype=bool)].mean())
    students = {}
    for loss in ("distill", "ms"):  # MS v1 on the same KG and budget: the control
        out = tmp_path / loss
        config = _config(tiny_bert_path, out, loss=loss, hard_negatives=False)
        build_trainer(config, kg=parallel_kg).train()
        students[loss] = TermEncoder.load(out, device="cpu")
    student = students["distill"]
    english = _cosines(student, target, names.pivots)
    after_es = _cosines(student, target, spanish)
    # (i) English stays on the teacher. Before training the cosines are 1 and the English half
    # of every batch pulls them back. The bound 0.98 lies above what tells the pivots apart on
    # this random 32-d BERT (their mutual cosines and the untrained Spanish names' cosines to
    # their pivots are both ~0.93-0.95): English that drifted as far as a neighbour fails it,
    # and each pivot's nearest teacher vector must stay its own.
    assert max(neighbours, float(before_es.mean())) < 0.98
    assert english.min() >= 0.98, english
    nearest = (student.encode(names.pivots) @ _unit(target).T).argmax(axis=1)
    assert nearest.tolist() == list(range(len(names.pivots)))
    control = _cosines(students["ms"], target, names.pivots)  # no anchor: English drifts
    assert 1.0 - english.mean() < (1.0 - control.mean()) / 2, control
    # (ii) translations move toward their English name's teacher vector
    assert float(after_es.mean()) > float(before_es.mean()) + 0.01
    assert float(np.mean(after_es > before_es)) >= 0.75
    lines = (tmp_path / "distill" / "train_log.jsonl").read_text().splitlines()
    tr = [json.loads(line)["distill_tr"] for line in lines]
    assert np.mean(tr[-5:]) < np.mean(tr[:5])
    card = json.loads((tmp_path / "distill" / "objective.json").read_text())
    assert card["loss"] == "distill" and card["teacher"] == str(tiny_bert_path)
    assert card["distill_with"] == "none" and card["parallel_concepts_with_translation"] == 20
    assert "## Objective" in (tmp_path / "distill" / "README.md").read_text()


def test_distillation_with_the_ms_loss_trains_both(
    tiny_bert_path: Path, parallel_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    out = tmp_path / "combined"
    config = _config(
        tiny_bert_path, out, steps=4, distill_with="ms", distill_weight=0.5, distill_pairs=6
    )
    trainer = build_trainer(config, kg=parallel_kg)
    batch = trainer.source.batch(0, 0)
    assert len(batch.terms) == 2 * 16 + 2 * 6  # the KG sampler's 2k, then 2P parallel texts
    trainer.train()
    record = json.loads((out / "train_log.jsonl").read_text().splitlines()[-1])
    for part in ("loss", "ms", "distill", "distill_en", "distill_tr"):
        assert np.isfinite(record[part]), part
    assert record["loss"] == pytest.approx(record["ms"] + 0.5 * record["distill"], rel=1e-5)
    card = json.loads((out / "objective.json").read_text())
    assert card["distill_with"] == "ms" and card["distill_weight"] == 0.5


def test_a_resumed_distillation_equals_the_uninterrupted_run(
    tiny_bert_path: Path, parallel_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    full, cut = tmp_path / "full", tmp_path / "cut"
    build_trainer(_config(tiny_bert_path, full, steps=6), kg=parallel_kg).train()
    first = _config(tiny_bert_path, cut, steps=3, checkpoint_every=2, clean_checkpoints=False)
    build_trainer(first, kg=parallel_kg).train()  # a checkpoint at step 2
    build_trainer(first.replace(steps=6), kg=parallel_kg).train(resume=True)
    a = TermEncoder.load(full, device="cpu").encode(["fiebre", "fever"])
    b = TermEncoder.load(cut, device="cpu").encode(["fiebre", "fever"])
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    steps = [json.loads(x)["step"] for x in (cut / "train_log.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 7))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"distill_with": "ms-v3"}, "--distill-with ms-v3 needs --kge"),
        ({"kge": "k"}, "reads --kge only with --distill-with ms-v3"),
        ({"batches": "prototype"}, "--batches prototype serves --loss ms, ms-v2, ms-v3"),
        ({"distill_pairs": 0}, "--distill-pairs must be at least 1"),
    ],
)
def test_impossible_settings_are_refused_naming_the_flag(
    settings: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        TrainConfig.from_dict({"loss": "distill", **settings}).validate()


def test_the_objective_is_listed_with_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert "distill" in OBJECTIVES.names()
    code, out, _ = run_main(["train", "--loss", "distill", "--help"], capsys)
    assert code == 0
    for flag in ("--teacher", "--distill-weight", "--distill-with", "--distill-pairs"):
        assert flag in out
    code, out, _ = run_main(["train", "--help"], capsys)
    assert code == 0 and "mtcg, distill" in " ".join(out.split())  # the objective list
    code, _, err = run_main(["train", "--loss", "distil", "--help"], capsys)
    assert code == 2 and "did you mean 'distill'?" in " ".join(err.replace("│", " ").split())


def test_a_distilled_model_serves_normalize_map_and_the_service(
    tiny_bert_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The folder ``termnorm train --loss distill`` writes is an encoder like any other: it
    indexes the KG, and ``normalize``, ``map run`` and the service's ``/v1/normalize`` answer
    with it (a Spanish and a French name found through their own vectors)."""
    from _serve_fixtures import serving

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TERMNORM_PROJECT_DB", raising=False)
    kg = make_parallel_kg().save(tmp_path / "kg", card={"sources": [{"format": "fixture"}]})
    model, index = tmp_path / "distilled", tmp_path / "idx"
    train = ["train", "--kg", str(kg), "--out", str(model), "--loss", "distill"]
    train += ["--base-model", str(tiny_bert_path), "--steps", "4", "--k", "8"]
    train += ["--max-length", "16", "--device", "cpu", "--checkpoint-every", "0"]
    train += ["--freeze-layers", "0"]  # the tiny BERT has 2 layers
    code, _, err = run_main(train, capsys)
    assert code == 0, err
    assert json.loads((model / "training_config.json").read_text())["loss"] == "distill"
    build = ["index", "build", "--kg", str(kg), "--model", str(model), "--out", str(index)]
    code, _, err = run_main(build, capsys)
    assert code == 0, err

    code, out, err = run_main(["normalize", "--index", str(index), "--json", "fiebre"], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["candidates"][0]["concept_id"] == "P:01"

    codes = tmp_path / "codes.csv"
    codes.write_text("code,name\nL1,toux\nL2,asma\n", encoding="utf-8")
    init = ["map", "init", "local", "--source", str(codes), "--code-column", "code"]
    code, _, err = run_main([*init, "--text-column", "name", "--index", str(index)], capsys)
    assert code == 0, err
    code, out, err = run_main(["map", "run", "local", "--no-progress", "--json"], capsys)
    assert code == 0 and json.loads(out)["mapped"] == 2, err
    rows = tmp_path / "rows.csv"
    export = ["map", "export", "local", "--format", "csv", "--out", str(rows)]
    assert run_main(export, capsys)[0] == 0
    with rows.open(encoding="utf-8") as f:
        top = {r["code"]: r["top_concept_id"] for r in csv.DictReader(f)}
    assert top == {"L1": "P:02", "L2": "P:06"}

    with serving(index) as client:
        answer = client.post("/v1/normalize", json={"texts": ["infarctus"]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["results"][0]["candidates"][0]["concept_id"] == "P:16"
