"""Coordinated names: each conjunct that shares a part with a found name, its span across the
conjunction, read as the name it makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from termnorm.annotate import DictionaryDetector, Span
from termnorm.annotate.coordination import coordination_spans
from termnorm.annotate.pipeline import Annotator
from termnorm.search.spec import PipelineSpec

NAMES = [
    ("HP:1", "Palmar pits"),
    ("HP:2", "Plantar pits"),
    ("HP:3", "Hypoplastic nails"),
    ("HP:4", "Hypoplastic teeth"),
    ("HP:5", "Branchial anomaly"),
    ("HP:6", "Otic anomaly"),
    ("HP:7", "Renal anomaly"),
    ("HP:8", "Hypoplasia of the clavicles"),
    ("HP:9", "Hypoplasia of the ribs"),
    ("HP:10", "Breast cancer"),
    ("HP:11", "Ovarian cancer"),
    ("HP:12", "Long philtrum"),
]


@pytest.fixture(scope="module")
def detector() -> DictionaryDetector:
    return DictionaryDetector.from_names(NAMES)


def conjuncts(detector: DictionaryDetector, text: str) -> list[tuple[str, str, tuple[str, ...]]]:
    spans = coordination_spans(detector, text, detector.detect(text))
    assert all(text[s.start : s.end] == s.text for s in spans)
    return [(s.text, s.query, s.concept_ids) for s in spans]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a head shared by two modifiers: the first conjunct spans the coordination
        ("palmar and plantar pits", [("palmar and plantar pits", "palmar pits", ("HP:1",))]),
        ("breast and ovarian cancer", [("breast and ovarian cancer", "breast cancer", ("HP:10",))]),
        # a modifier shared by two heads
        (
            "hypoplastic nails and teeth",
            [("hypoplastic nails and teeth", "hypoplastic teeth", ("HP:4",))],
        ),
        (
            "hypoplasia of the clavicles and ribs",
            [("hypoplasia of the clavicles and ribs", "hypoplasia of the ribs", ("HP:9",))],
        ),
        # a list: every item, each from its own word to the shared head
        (
            "branchial, otic and renal anomalies",
            [
                ("branchial, otic and renal anomalies", "branchial anomalies", ("HP:5",)),
                ("otic and renal anomalies", "otic anomalies", ("HP:6",)),
            ],
        ),
    ],
)
def test_each_conjunct_is_a_span_read_as_its_name(
    detector: DictionaryDetector, text: str, expected: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    assert conjuncts(detector, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "breast cancer and ovarian cancer",  # both written whole: nothing to add
        "long philtrum, plantar pits",  # a list without a conjunction shares nothing
        "palmar skin and plantar pits",  # the words so made ("skin pits") are no name
        "pits and palmar",  # a one-word name has no part to share
        "hypoplastic nails and teeth grinding",  # "teeth" modifies a word: not a head
    ],
)
def test_no_conjunct_where_no_part_is_shared(detector: DictionaryDetector, text: str) -> None:
    assert conjuncts(detector, text) == []


class _QueryDetector:
    """Finds "the cardiac event" as a span whose query is a name of the tiny KG."""

    name = "dictionary"

    def detect(self, text: str) -> list[Span]:
        start = text.index("the cardiac event")
        end = start + len("the cardiac event")
        return [Span(start, end, text[start:end], self.name, (), "heart attack", "coordination")]


def test_the_normalizer_reads_a_span_by_its_query(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    annotator = Annotator(PipelineSpec(index=index_dir, min_score=0.99), [_QueryDetector()])
    (found,) = annotator.annotate("He had the cardiac event.")
    assert (found.text, found.concept_id) == ("the cardiac event", "T:0001")
    assert (found.expansion, found.expansion_source) == ("heart attack", "coordination")


def test_a_list_gives_its_items_only_when_each_makes_a_name(
    detector: DictionaryDetector,
) -> None:
    # "ovarian anomalies" is no name: the list shares nothing
    assert conjuncts(detector, "ovarian, otic and renal anomalies") == []


def test_an_item_inside_another_name_restates_it() -> None:
    names = [("D:1", "Myotonic dystrophy"), ("D:2", "Dystrophia myotonica")]
    detector = DictionaryDetector.from_names(names)
    assert conjuncts(detector, "myotonic dystrophy, or dystrophia myotonica") == []


def test_annotate_finds_each_conjunct_by_default(
    tiny_bert_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import exact_index_of
    from termnorm.annotate.detectors import build_annotator
    from termnorm.annotate.spec import AnnotateSpec

    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    concepts = [{"concept_id": cid, "name": name} for cid, name in NAMES[:4]]
    terms = [{"concept_id": cid, "term": name} for cid, name in NAMES[:4]]
    index = exact_index_of(tmp_path, tiny_bert_path, concepts, terms)
    text = "She had palmar and plantar pits."
    spec = AnnotateSpec(PipelineSpec(index=index))
    assert spec.coordination
    found = {(a.text, a.concept_id) for a in build_annotator(spec).annotate(text)}
    assert found == {("palmar and plantar pits", "HP:1"), ("plantar pits", "HP:2")}
    alone = build_annotator(spec.replace(coordination=False)).annotate(text)
    assert {(a.text, a.concept_id) for a in alone} == {("plantar pits", "HP:2")}
