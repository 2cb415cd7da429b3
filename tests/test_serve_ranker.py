"""The service with a ranker: answers equal the library's RankedMatcher, candidates keep
their recall and ranker scores, and ``multi`` gives codes only when it can."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")

from _serve_fixtures import build_tiny_index, serving
from termnorm import api
from termnorm.cli.main import main
from termnorm.search.stages.ranker import implication as implication_module
from termnorm.search.stages.ranker.matcher import RankedMatcher
from termnorm.search.stages.ranker.ranker import load_ranker

MENTIONS = [
    ("T:0001", "heart attacks"),
    ("T:0001", "attack of the heart"),
    ("T:0002", "high pressure"),
    ("T:0002", "raised blood pressure"),
    ("T:0003", "sugar disease"),
    ("T:0004", "wheezing asthma"),
    ("T:0006", "lung infections"),
    ("T:0008", "cardiac problem"),
]


class ThreeForAnd:
    """Predicts 3 codes for texts with 'and', else 1."""

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([3 if " and " in t else 1 for t in texts], dtype=np.int64)


@pytest.fixture(scope="module")
def ranked(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tiny index and a ranker trained on its candidates."""
    tmp = tmp_path_factory.mktemp("serve-rank")
    index = build_tiny_index(tmp, tiny_bert_path)
    mentions = tmp / "train.tsv"
    mentions.write_text("".join(f"{c}\t{t}\n" for c, t in MENTIONS))
    with pytest.raises(SystemExit) as done:
        main(
            [
                "rank",
                "train",
                "--index",
                str(index),
                "--mentions",
                str(mentions),
                "--format",
                "tsv",
                "--model",
                str(tiny_bert_path),
                "--k-c",
                "4",
                "--epochs",
                "1",
                "--batch-size",
                "8",
                "--max-length",
                "48",
                "--out",
                str(tmp / "ranker"),
            ]
        )
    assert not done.value.code
    return index, tmp / "ranker"


def test_ranked_answers_equal_the_library(ranked: tuple[Path, Path]) -> None:
    index, ranker = ranked
    texts = ["heart attack", "asthma"]
    expected = RankedMatcher(api.get_normalizer(index), load_ranker(ranker), k_c=4)
    with serving(index, ranker=ranker, k_c=4) as client:
        answer = client.post("/v1/normalize", json={"texts": texts, "k": 3})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["strategy"] == "o-t+kar[learned]"  # the folder carries a stacked combiner
    for text, result in zip(texts, body["results"], strict=True):
        want = expected.normalize(text, 3)
        got = result["candidates"]
        assert [c["concept_id"] for c in got] == [c.concept_id for c in want]
        for c, w in zip(got, want, strict=True):
            assert c["score"] == pytest.approx(w.score, abs=1e-5)
            assert c["recall_score"] == pytest.approx(w.recall_score, abs=1e-5)
            assert c["ranker_score"] == pytest.approx(w.ranker_score, abs=1e-5)
        assert result["concept_ids"] is None and result["implication"] is None


def test_abstentions_are_the_matchers_own(ranked: tuple[Path, Path]) -> None:
    """``min_score`` with a learned ranker is its probability floor, and a text left without
    candidates says so in the ranked matcher's words (the service has none of its own)."""
    index, ranker = ranked
    texts = ["heart attack", "asthma"]
    library = RankedMatcher(
        api.get_normalizer(index), load_ranker(ranker), k_c=4, min_probability=1.0
    ).normalize_rows(texts, 3)
    with serving(index, ranker=ranker, k_c=4) as client:
        answer = client.post("/v1/normalize", json={"texts": texts, "k": 3, "min_score": 1.0})
    assert answer.status_code == 200, answer.text
    results = answer.json()["results"]
    assert [r["abstained"] for r in results] == [row.abstained for row in library]
    assert all(r["abstained"] and "probability" in r["abstained"] for r in results)


def test_multi_needs_a_ranker_and_a_head(
    ranked: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    index, ranker = ranked
    with serving(index) as client:  # no ranker
        answer = client.post("/v1/normalize", json={"texts": ["asthma"], "multi": True})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["body", "multi"]
    assert "--ranker" in answer.json()["detail"][0]["msg"]
    with serving(index, ranker=ranker) as client:  # a ranker but no implication head
        answer = client.post("/v1/normalize", json={"texts": ["asthma"], "multi": True})
        plain = client.post("/v1/normalize", json={"texts": ["asthma"]})
    assert answer.status_code == 422 and "--objective mtcg" in answer.json()["detail"][0]["msg"]
    assert plain.status_code == 200

    head = tmp_path / "head"
    head.mkdir()
    monkeypatch.setattr(implication_module, "load_implication", lambda path: ThreeForAnd())
    with serving(index, ranker=ranker, implication=head, k_c=4) as client:
        answer = client.post(
            "/v1/normalize",
            json={"texts": ["heart attack", "asthma and pneumonia"], "k": 2, "multi": True},
        )
    assert answer.status_code == 200, answer.text
    single, several = answer.json()["results"]
    assert single["implication"] == 1
    assert single["concept_ids"] == [single["candidates"][0]["concept_id"]]
    assert several["implication"] == 3
    assert 3 <= len(several["concept_ids"]) <= 4  # top 3 plus any further one above θ
    assert several["concept_ids"][:2] == [c["concept_id"] for c in several["candidates"]]
