"""End to end on the tiny BERT: ``termnorm rank train`` → ``normalize --ranker`` (multi-code
output with a fake implication predictor) → ``eval normalize --ranker``; the ranker folder
round trip, its card, and its refusal of another index."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from _cli import run_main
from conftest import make_tiny_kg
from termnorm import api
from termnorm.cli.main import main
from termnorm.errors import ArtifactMismatchError
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.search.build import clear_caches
from termnorm.search.stages.ranker import implication as implication_module
from termnorm.search.stages.ranker.ranker import CARD_NAME, load_ranker

MENTIONS = [  # (concept, text): the training mentions, also the domain synonyms
    ("T:0001", "heart attacks"),
    ("T:0001", "attack of the heart"),
    ("T:0002", "high pressure"),
    ("T:0002", "raised blood pressure"),
    ("T:0003", "diabetic"),
    ("T:0003", "sugar disease"),
    ("T:0004", "asthma attack"),
    ("T:0004", "wheezing asthma"),
    ("T:0005", "headache migraine"),
    ("T:0006", "lung infections"),
    ("T:0007", "low iron"),
    ("T:0008", "cardiac problem"),
    ("T:0009", "lung problem"),
]


class FakeImplication:
    """Predicts 3 codes for texts with 'and', else 1."""

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([3 if " and " in t else 1 for t in texts], dtype=np.int64)


@pytest.fixture(autouse=True)
def fresh_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_caches()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))


def _index(kg_dir: Path, model: Path, out: Path) -> Path:
    _run(
        [
            "index",
            "build",
            "--kg",
            str(kg_dir),
            "--model",
            str(model),
            "--out",
            str(out),
            "--backend",
            "exact",
            "--memory-budget",
            "1GB",
        ]
    )
    return out


def _run(args: list[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(args)
    assert not done.value.code, f"termnorm {' '.join(args)} failed"


@pytest.fixture(scope="module")
def trained(
    tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Path]:
    """An index of the tiny KG and a ranker trained on it (once for the module)."""
    tmp = tmp_path_factory.mktemp("rank")
    kg_dir = make_tiny_kg().save(tmp / "kg", card={"sources": [{"format": "fixture"}]})
    index = _index(kg_dir, tiny_bert_path, tmp / "idx")
    mentions = tmp / "train.tsv"
    mentions.write_text("".join(f"{c}\t{t}\n" for c, t in MENTIONS))
    _run(
        [
            "rank",
            "train",
            "--index",
            str(index),
            "--mentions",
            str(mentions),
            "--synonyms",
            str(mentions),
            "--format",
            "tsv",
            "--model",
            str(tiny_bert_path),
            "--k-c",
            "4",
            "--epochs",
            "2",
            "--batch-size",
            "8",
            "--folds",
            "3",
            "--max-length",
            "48",
            "--json",
            "--out",
            str(tmp / "ranker"),
        ],
    )
    return index, mentions, tmp / "ranker"


def test_rank_train_writes_a_card_that_says_what_made_it(trained: tuple[Path, Path, Path]) -> None:
    index, mentions, ranker = trained
    card = json.loads((ranker / CARD_NAME).read_text())
    assert (
        card["kind"] == "kar"
        and card["k_c"] == 4
        and card["training"]["epochs"] == 2
        and card["strategy"] == "d-t+od-t"
    )
    assert card["index"]["path"] == str(index.resolve())
    assert card["index"]["kg_fingerprint"] == TermIndex.load(index).card["kg"]["fingerprint"]
    assert card["synonyms"] == [{"path": str(mentions), "cross_fitted": True}]
    assert card["cross_fitting"] == {"folds": 3, "seed": 0}
    held = card["holdout"]["documents"]  # default --holdout 0.2 of the (one-mention) documents
    assert len(held) == round(0.2 * len(MENTIONS)) and card["holdout"]["fraction"] == 0.2
    assert card["metrics"]["queries"] == len(MENTIONS) - len(held)
    assert card["metrics"]["pairs"] == 4 * (len(MENTIONS) - len(held))
    assert card["training"]["loss"] == "listwise" and card["max_length"] == 48
    assert card["combiner"]["metrics"]["queries"] == len(held)  # stacked on the held-out ones
    assert len(card["metrics"]["epoch_loss"]) == 2
    assert len(card["keywords"]["sha256"]) == 64 and (ranker / "keywords.tsv").is_file()


def test_ranker_round_trip_scores_a_mentions_candidates(
    trained: tuple[Path, Path, Path],
) -> None:
    index, _, folder = trained
    ranker = load_ranker(folder)
    candidates = api.normalize("heart attack", index=index, k=4)
    scores = ranker.score("heart attack", candidates)
    assert scores.shape == (4,) and ((scores > 0) & (scores < 1)).all()
    batch = ranker.score_batch(["heart attack", "asthma"], [candidates, candidates[:2]], 5)
    assert np.allclose(batch[0], scores, atol=1e-5) and batch[1].shape == (2,)


def test_normalize_with_ranker_keeps_every_score(
    trained: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    index, mentions, ranker = trained
    code, out, err = run_main(
        [
            "normalize",
            "heart attack",
            "asthma",
            "--index",
            str(index),
            "--synonyms",
            str(mentions),
            "--ranker",
            str(ranker),
            "--k-c",
            "4",
            "-k",
            "3",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    rows = json.loads(out)
    for row in rows:
        candidates = row["candidates"]
        assert [c["rank"] for c in candidates] == [1, 2, 3]
        scores = [c["score"] for c in candidates]
        assert scores == sorted(scores, reverse=True)
        assert all(0 < c["ranker_score"] < 1 and -1 <= c["recall_score"] <= 1 for c in candidates)
        assert "concept_ids" not in row
    # the API gives the same ranking
    ranked = api.normalize(["heart attack"], index=index, ranker=ranker, k_c=4, k=3)[0]
    assert all(c.ranker_score is not None for c in ranked)


def test_multi_code_output_with_an_implication_predictor(
    trained: tuple[Path, Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    index, _, ranker = trained
    code, _, err = run_main(
        ["normalize", "heart attack", "--index", str(index), "--ranker", str(ranker), "--multi"],
        capsys,
    )
    assert code == 1 and "--objective mtcg" in err  # no implication head anywhere
    head = tmp_path / "mtcg"
    head.mkdir()
    seen: list[Path] = []

    def fake_loader(path: Path) -> FakeImplication:
        seen.append(path)
        return FakeImplication()

    monkeypatch.setattr(implication_module, "load_implication", fake_loader)
    code, out, err = run_main(
        [
            "normalize",
            "heart attack",
            "asthma and pneumonia",
            "--index",
            str(index),
            "--ranker",
            str(ranker),
            "--multi",
            "--implication",
            str(head),
            "--k-c",
            "6",
            "--theta",
            "0.0",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    assert seen == [head]
    single, multi = json.loads(out)
    assert single["implication"] == 1 and len(single["concept_ids"]) == 1
    assert single["concept_ids"][0] == single["candidates"][0]["concept_id"]
    assert multi["implication"] == 3
    assert len(multi["concept_ids"]) == 6  # θ = 0: every recalled candidate beyond the top 3


def test_eval_normalize_with_ranker_modes(
    trained: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index, mentions, ranker = trained
    results = {}
    for mode in ("recall", "rank", "fused", "learned"):
        code, out, err = run_main(
            [
                "eval",
                "normalize",
                str(mentions),
                "--format",
                "tsv",
                "--index",
                str(index),
                "--ranker",
                str(ranker),
                "--rank-mode",
                mode,
                "--k-c",
                "5",
                "-k",
                "5",
                "--json",
                "--predictions",
                str(tmp_path / f"{mode}.jsonl"),
            ],
            capsys,
        )
        assert code == 0, err
        results[mode] = json.loads(out)
    plain = run_main(
        [
            "eval",
            "normalize",
            str(mentions),
            "--format",
            "tsv",
            "--index",
            str(index),
            "-k",
            "5",
            "--json",
        ],
        capsys,
    )
    baseline = json.loads(plain[1])
    assert results["recall"]["acc@1"] == baseline["acc@1"]  # the ablation's recall order
    # reordering the same 5 candidates cannot change acc@5
    assert results["rank"]["acc@5"] == results["fused"]["acc@5"] == baseline["acc@5"]
    assert results["learned"]["acc@5"] == baseline["acc@5"]
    assert results["fused"]["matcher"].endswith("+kar[fused]")
    assert results["learned"]["matcher"].endswith("+kar[learned]")


def test_a_ranker_refuses_another_index(
    trained: tuple[Path, Path, Path],
    tmp_path: Path,
    tiny_bert_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, _, ranker = trained
    kg = make_tiny_kg()
    smaller = KnowledgeGraph.from_records(
        kg.concepts[kg.concepts.concept_id != "T:0010"].to_dict("records"),
        kg.terms[kg.terms.concept_id != "T:0010"].to_dict("records"),
        kg.relations.to_dict("records"),
    )
    other = _index(
        smaller.save(tmp_path / "kg2", card={"sources": []}), tiny_bert_path, tmp_path / "i2"
    )
    code, _, err = run_main(
        ["normalize", "heart attack", "--index", str(other), "--ranker", str(ranker)], capsys
    )
    assert code == 1 and "termnorm rank train --index" in err
    with pytest.raises(ArtifactMismatchError, match="trained on candidates of the index"):
        api.normalize("heart attack", index=other, ranker=ranker)
    with pytest.raises(ArtifactMismatchError, match="not a termnorm ranker folder"):
        load_ranker(tmp_path)


def test_multi_code_columns_in_files(
    trained: tuple[Path, Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import csv

    index, _, ranker = trained
    monkeypatch.setattr(implication_module, "load_implication", lambda path: FakeImplication())
    source = tmp_path / "in.csv"
    source.write_text("id,text\n1,heart attack\n2,asthma and pneumonia\n3,\n")
    out = tmp_path / "out.csv"
    code, _, err = run_main(
        [
            "normalize",
            "--input",
            str(source),
            "--output",
            str(out),
            "--index",
            str(index),
            "--ranker",
            str(ranker),
            "--multi",
            "--implication",
            str(tmp_path),
            "--k-c",
            "6",
            "--theta",
            "0.0",
        ],
        capsys,
    )
    assert code == 0, err
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert [r["id"] for r in rows] == ["1", "2", "3"]  # one row per input row, in order
    first, several, empty = rows
    assert first["implication"] == "1" and first["concept_ids"] == first["concept_id"]
    assert several["implication"] == "3"
    assert len(several["concept_ids"].split("|")) == 6  # θ = 0: all k_c beyond the top 3
    assert several["concept_ids"].split("|")[0] == several["concept_id"]
    assert empty["error"] and not empty["concept_ids"]


def test_eval_normalize_multi_scores_exact_code_sets_and_implication_numbers(
    trained: tuple[Path, Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    index, _, ranker = trained
    monkeypatch.setattr(implication_module, "load_implication", lambda path: FakeImplication())
    dev = tmp_path / "dev.tsv"
    dev.write_text(
        "T:0001\theart attack\nT:0004\tasthma\nT:0002\tblood pressure\n"
        "T:0004|T:0006\tasthma and lung infection\n"
    )
    common = ["eval", "normalize", str(dev), "--format", "tsv", "--index", str(index)]
    common += ["--ranker", str(ranker), "--k-c", "6", "-k", "5", "--json"]
    code, out, err = run_main([*common, "--multi"], capsys)
    assert code == 1 and "--objective mtcg" in err  # no implication head anywhere
    code, out, err = run_main(
        [*common, "--multi", "--implication", str(tmp_path), "--theta", "0.0"], capsys
    )
    assert code == 0, err
    got = json.loads(out)
    # one-code mentions are predicted one code (FakeImplication: no ' and '): the top candidate,
    # so the exact-set score of one-code mentions is their acc@1
    assert got["multi_code_n_uni"] == 3 and got["multi_code_uni"] == got["acc@1"]
    assert got["implication_1"] == 1.0 and got["implication_n_1"] == 3
    # the composite is predicted 3+ codes, with θ = 0 all 6 candidates: never the 2-code gold set
    assert got["multi_code_n_multi"] == 1 and got["multi_code_multi"] == 0.0
    assert got["implication_2"] == 0.0 and got["implication_total"] == 0.75
    assert got["multi_code_total"] == pytest.approx(3 * got["acc@1"] / 4)
    code, out, _ = run_main(common, capsys)  # without --multi: no multi-code figures
    assert code == 0 and "multi_code_total" not in json.loads(out)
    table = [*common[:-1], "--multi", "--implication", str(tmp_path), "--theta", "0.0"]
    code, out, err = run_main(table, capsys)  # the human-readable table
    assert code == 0, err
    assert "multi-code" in out and "several codes" in out and "75.00" in out


def test_multi_code_metrics_on_hand_made_rows() -> None:
    from termnorm.evaluation.multi_code import multi_code_metrics
    from termnorm.search.candidate import RowResult

    rows = {
        "a": RowResult([], concept_ids=("X",), implication=1),
        "b and c": RowResult([], concept_ids=("C", "B"), implication=2),
        "d and e": RowResult([], concept_ids=("D",), implication=1),
    }
    mentions = [("a", ("X",)), ("b and c", ("B", "C")), ("d and e", ("D", "E")), ("gone", ("Z",))]
    got = multi_code_metrics(mentions, rows)
    assert got["multi_code_uni"] == 0.5  # "a" right; "gone" has no row: no code
    assert got["multi_code_multi"] == 0.5 and got["multi_code_total"] == 0.5
    assert got["implication_1"] == 1.0 and got["implication_2"] == 0.5
