"""End to end on the tiny BERT: ``rank hybrid`` and ``rank combine`` cards, used by
``eval normalize``, ``normalize`` and the API (``hybrid=``, ``combiner=``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import run_main
from conftest import make_tiny_kg
from termnorm import api
from termnorm.search.build import clear_caches
from test_rank_cli import MENTIONS, _index

INDEX_ARGS = ["--format", "tsv", "--folds", "2"]


@pytest.fixture(autouse=True)
def fresh_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_caches()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def cards(
    tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Path, Path]:
    """An index of the tiny KG, its training mentions, a hybrid card and a combiner card."""
    tmp = tmp_path_factory.mktemp("learned")
    kg_dir = make_tiny_kg().save(tmp / "kg", card={"sources": [{"format": "fixture"}]})
    index = _index(kg_dir, tiny_bert_path, tmp / "idx")
    mentions = tmp / "train.tsv"
    mentions.write_text("".join(f"{c}\t{t}\n" for c, t in MENTIONS))
    common = ["--index", str(index), "--mentions", str(mentions), "--synonyms", str(mentions)]
    hybrid, combiner = tmp / "hybrid.json", tmp / "combiner.json"
    with pytest.raises(SystemExit) as done:
        from termnorm.cli.main import main

        main(
            [
                "rank",
                "hybrid",
                *common,
                *INDEX_ARGS,
                "--k-dense",
                "5",
                "--k-sparse",
                "5",
                "--out",
                str(hybrid),
            ]
        )
    assert not done.value.code
    with pytest.raises(SystemExit) as done:
        main(
            [
                "rank",
                "combine",
                *common,
                *INDEX_ARGS,
                "--hybrid",
                str(hybrid),
                "--k-c",
                "5",
                "--out",
                str(combiner),
            ]
        )
    assert not done.value.code
    return index, mentions, hybrid, combiner


def test_cards_record_what_made_them(cards: tuple[Path, Path, Path, Path]) -> None:
    _index_dir, _mentions, hybrid, combiner = cards
    h = json.loads(hybrid.read_text())
    assert h["kind"] == "hybrid-recall" and 0.0 <= h["weight"] <= 1.0
    assert h["strategy"] == "d-t+od-t" and h["metrics"]["queries"] == len(MENTIONS)
    c = json.loads(combiner.read_text())
    assert c["kind"] == "combiner" and c["hybrid"] == str(hybrid.resolve())
    assert (
        c["combiner"]["features"][0] == "recall_score"
        and "ranker_logit" not in c["combiner"]["features"]
    )


def test_eval_and_normalize_use_the_cards(
    cards: tuple[Path, Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    index, mentions, hybrid, combiner = cards
    base = [
        "eval",
        "normalize",
        str(mentions),
        "--format",
        "tsv",
        "--index",
        str(index),
        "--synonyms",
        str(mentions),
        "-k",
        "5",
        "--json",
    ]
    code, out, err = run_main([*base, "--hybrid", str(hybrid)], capsys)
    assert code == 0, err
    assert json.loads(out)["matcher"].startswith("hybrid(d-t+od-t+tfidf")
    code, out, err = run_main([*base, "--hybrid", str(hybrid), "--combiner", str(combiner)], capsys)
    assert code == 0, err
    assert json.loads(out)["matcher"].endswith("+combiner")
    code, out, err = run_main(
        [
            "normalize",
            "heart attack",
            "--index",
            str(index),
            "--synonyms",
            str(mentions),
            "--hybrid",
            str(hybrid),
            "--combiner",
            str(combiner),
            "--min-score",
            "0.0",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    first = json.loads(out)[0]["candidates"][0]
    assert 0.0 <= first["score"] <= 1.0 and first["recall_score"] is not None


def test_api_hybrid_and_combiner(cards: tuple[Path, Path, Path, Path]) -> None:
    index, mentions, hybrid, combiner = cards
    plain = api.normalize("heart attack", index=index, synonyms=mentions, k=3, hybrid=hybrid)
    assert plain and plain[0].recall_score is not None
    probs = api.normalize(
        "heart attack", index=index, synonyms=mentions, k=3, hybrid=hybrid, combiner=combiner
    )
    assert all(0.0 <= c.score <= 1.0 for c in probs)
    none = api.normalize(
        "heart attack",
        index=index,
        synonyms=mentions,
        hybrid=hybrid,
        combiner=combiner,
        min_score=1.0,
    )
    assert none == []
    with pytest.raises(ValueError, match="names its own ranker"):
        api.normalize("heart attack", index=index, combiner=combiner, ranker=index)


def test_holdout_documents_are_a_seeded_share() -> None:
    from termnorm.search.stages.crossfit import holdout_documents

    docs = [f"d{i}" for i in range(20)]
    held = holdout_documents(docs + docs, 0.25, seed=3)
    assert len(held) == 5 and held <= set(docs)
    assert held == holdout_documents(reversed(docs), 0.25, seed=3)
    assert held != holdout_documents(docs, 0.25, seed=4)
    assert holdout_documents(docs, 0.0, seed=3) == frozenset()
    assert len(holdout_documents(docs[:2], 0.1, seed=0)) == 1  # at least one document
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        holdout_documents(docs, 1.0, seed=0)


def test_combiner_is_stacked_on_the_rankers_held_out_documents(
    cards: tuple[Path, Path, Path, Path],
    tiny_bert_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from termnorm.cli.main import main

    index, mentions, _hybrid, _combiner = cards
    common = [
        "--index",
        str(index),
        "--mentions",
        str(mentions),
        "--synonyms",
        str(mentions),
        *INDEX_ARGS,
    ]
    ranker = tmp_path / "ranker"
    with pytest.raises(SystemExit) as done:
        main(
            [
                "rank",
                "train",
                *common,
                "--model",
                str(tiny_bert_path),
                "--k-c",
                "4",
                "--epochs",
                "1",
                "--batch-size",
                "8",
                "--max-length",
                "32",
                "--loss",
                "listwise",
                "--holdout",
                "0.3",
                "--out",
                str(ranker),
            ]
        )
    assert not done.value.code
    rcard = json.loads((ranker / "ranker.json").read_text())
    held = rcard["holdout"]["documents"]
    assert len(held) == 4 and rcard["metrics"]["queries"] == len(MENTIONS) - 4
    stacked_in_folder = rcard["combiner"]  # rank train fits it on the held-out documents
    assert stacked_in_folder["metrics"]["queries"] == 4
    assert "ranker_logit" in stacked_in_folder["combiner"]["features"]
    stacked = tmp_path / "stacked.json"
    with pytest.raises(SystemExit) as done:
        main(
            [
                "rank",
                "combine",
                *common,
                "--ranker",
                str(ranker),
                "--k-c",
                "4",
                "--out",
                str(stacked),
            ]
        )
    assert not done.value.code
    card = json.loads(stacked.read_text())
    assert card["metrics"]["queries"] == 4 and card["ranker_in_sample"] is False
    assert "ranker_logit" in card["combiner"]["features"]

    # --ranker orders by the folder's combiner by default; --min-score is then a probability
    ask = [
        "normalize",
        "heart attack",
        "--index",
        str(index),
        "--synonyms",
        str(mentions),
        "--ranker",
        str(ranker),
        "--k-c",
        "4",
        "--json",
    ]
    capsys.readouterr()
    code, out, err = run_main([*ask, "-k", "3"], capsys)
    assert code == 0, err
    (answer,) = json.loads(out)
    top = answer["candidates"]
    assert top and all(0.0 <= c["score"] <= 1.0 and c["ranker_score"] is not None for c in top)
    assert [c["score"] for c in top] == sorted((c["score"] for c in top), reverse=True)
    code, out, err = run_main([*ask, "--min-score", "1.0"], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["candidates"] == []
    code, out, err = run_main([*ask, "--rank-mode", "fused", "--min-score", "0.0"], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["candidates"]
    learned = api.normalize(
        "heart attack", index=index, synonyms=mentions, ranker=ranker, k_c=4, k=3
    )
    assert [c.concept_id for c in learned] == [c["concept_id"] for c in top]
    assert [round(c.score, 6) for c in learned] == [c["score"] for c in top]  # 6 decimals
