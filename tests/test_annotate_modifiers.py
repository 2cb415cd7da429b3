"""HPO's modifiers qualify the phenotype next to them; its other branches are no findings."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import exact_index_of
from termnorm.annotate.annotation import Annotation
from termnorm.annotate.modifiers import Findings, findings_search, qualify
from termnorm.annotate.pipeline import Annotator
from termnorm.annotate.sentences import sentence_spans
from termnorm.kg.hpo import DISEASE_TYPE
from termnorm.search.spec import PipelineSpec

Found = tuple[str, str, tuple[str, ...]]
Run = Callable[..., list[Found]]
NERVOUS = "Abnormality of the nervous system"
CONCEPTS = {
    "HP:0001251": ("Ataxia", NERVOUS),
    "HP:0001250": ("Seizure", NERVOUS),
    "HP:0012825": ("Mild", "Clinical modifier"),
    "HP:0012828": ("Severe", "Clinical modifier"),
    "HP:0003677": ("Slowly progressive", "Clinical modifier"),
    "HP:0003676": ("Progressive", "Clinical modifier"),
    "HP:0040282": ("Frequent", "Frequency"),
    "HP:0000006": ("Autosomal dominant inheritance", "Mode of inheritance"),
    "OMIM:154700": ("Marfan syndrome", DISEASE_TYPE),
    "HP:0000001": ("All", ""),
}


def _index_of(folder: Path, bert: Path, source: str) -> Path:
    """An exact index of :data:`CONCEPTS` typed by branch, as the HPO loader types them, its
    card naming ``source`` as the KG's source format."""
    concepts = [
        {"concept_id": cid, "name": name, "semantic_types": [kind] if kind else [], "alt_ids": []}
        for cid, (name, kind) in CONCEPTS.items()
    ]
    terms = [
        {"concept_id": cid, "term": name, "lang": "en", "source": "hpo", "is_preferred": True}
        for cid, (name, _) in CONCEPTS.items()
    ]
    return exact_index_of(folder, bert, concepts, terms, source)


@pytest.fixture(scope="module")
def hpo_index(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HPO concepts (phenotypes, modifiers, inheritance, a disease) of the hpo source."""
    return _index_of(tmp_path_factory.mktemp("hpo"), tiny_bert_path, "hpo")


@pytest.fixture(scope="module")
def tsv_index(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same concepts from a user's code list (tsv source) that has a Disease type."""
    return _index_of(tmp_path_factory.mktemp("tsv"), tiny_bert_path, "tsv")


@pytest.fixture()
def annotate(hpo_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """Annotate a text over the HPO index: ``(text, concept_id, modifiers)`` per finding."""
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))

    def run(
        text: str, findings: Findings = Findings.PHENOTYPES, index: Path = hpo_index
    ) -> list[Found]:
        annotator = Annotator(PipelineSpec(index=index, min_score=0.99), findings=findings)
        found = annotator.annotate(text)
        for a in found:
            assert text[a.start : a.end] == a.text
        return [(a.text, a.concept_id, a.modifiers) for a in found]

    return run


def test_mild_ataxia_is_one_ataxia_with_its_modifier(annotate: Run) -> None:
    assert annotate("She has mild ataxia.") == [("ataxia", "HP:0001251", ("HP:0012825 Mild",))]


def test_a_modifier_after_its_phenotype_qualifies_it(annotate: Run) -> None:
    assert annotate("The ataxia was progressive.") == [
        ("ataxia", "HP:0001251", ("HP:0003676 Progressive",))
    ]
    assert annotate("Ataxia, slowly progressive.") == [
        ("Ataxia", "HP:0001251", ("HP:0003677 Slowly progressive",))
    ]


def test_frequency_and_a_chain_of_modifiers_qualify_the_next_phenotype(annotate: Run) -> None:
    assert annotate("Frequent seizures and severe progressive ataxia.") == [
        ("seizures", "HP:0001250", ("HP:0040282 Frequent",)),
        ("ataxia", "HP:0001251", ("HP:0012828 Severe", "HP:0003676 Progressive")),
    ]


def test_a_modifier_with_no_phenotype_nearby_is_dropped(annotate: Run) -> None:
    assert annotate("The course was mild. Ataxia appeared later.") == [("Ataxia", "HP:0001251", ())]
    assert annotate("Mild, in the opinion of all who examined her, was the ataxia.") == [
        ("ataxia", "HP:0001251", ())
    ]


def test_inheritance_and_the_root_are_no_findings_by_default_and_all_reports_them(
    annotate: Run,
) -> None:
    text = "All had autosomal dominant inheritance of mild ataxia."
    assert annotate(text) == [("ataxia", "HP:0001251", ("HP:0012825 Mild",))]
    assert annotate(text, Findings.ALL) == [
        ("All", "HP:0000001", ()),
        ("autosomal dominant inheritance", "HP:0000006", ()),
        ("mild", "HP:0012825", ()),
        ("ataxia", "HP:0001251", ()),
    ]


MARFAN = "Marfan syndrome with mild ataxia."


def test_hpo_diseases_are_no_findings_and_all_reports_them(annotate: Run) -> None:
    assert annotate(MARFAN) == [("ataxia", "HP:0001251", ("HP:0012825 Mild",))]
    assert annotate(MARFAN, Findings.ALL) == [
        ("Marfan syndrome", "OMIM:154700", ()),
        ("mild", "HP:0012825", ()),
        ("ataxia", "HP:0001251", ()),
    ]


def test_a_disease_type_of_another_source_is_a_finding(annotate: Run, tsv_index: Path) -> None:
    assert annotate(MARFAN, index=tsv_index) == [
        ("Marfan syndrome", "OMIM:154700", ()),
        ("ataxia", "HP:0001251", ("HP:0012825 Mild",)),
    ]


def test_the_normalizer_never_picks_an_hpo_disease_under_phenotypes(
    hpo_index: Path, tsv_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))

    def searched(index: Path, findings: Findings) -> tuple[tuple[str, ...], list[str]]:
        annotator = Annotator(PipelineSpec(index=index), findings=findings)
        found = annotator.matcher.normalize("Marfan syndrome", k=len(CONCEPTS))
        return annotator.search.excluded_types, [c.concept_id for c in found]

    excluded, ids = searched(hpo_index, Findings.PHENOTYPES)
    assert excluded == (DISEASE_TYPE,) and len(ids) == len(CONCEPTS) - 1
    assert "OMIM:154700" not in ids
    for index, findings in ((hpo_index, Findings.ALL), (tsv_index, Findings.PHENOTYPES)):
        excluded, ids = searched(index, findings)
        assert excluded == () and ids[0] == "OMIM:154700"


def test_findings_search_leaves_a_spec_that_names_the_disease_type_and_merged_kgs(
    hpo_index: Path,
) -> None:
    import copy

    from termnorm.search.build import load_index

    index = load_index(hpo_index)
    asked = PipelineSpec(semantic_types=("disease",))
    assert findings_search(asked, Findings.PHENOTYPES, index) is asked
    excluded = PipelineSpec(excluded_types=("Mode of inheritance",))
    assert findings_search(excluded, Findings.PHENOTYPES, index).excluded_types == (
        "Mode of inheritance",
        DISEASE_TYPE,
    )
    merged = copy.copy(index)
    merged.card = {**index.card, "kg": {"sources": [{"format": "hpo"}, {"format": "tsv"}]}}
    assert findings_search(excluded, Findings.PHENOTYPES, merged) is excluded
    legacy = copy.copy(index)
    legacy.card = {k: v for k, v in index.card.items() if k != "kg"}
    assert findings_search(excluded, Findings.PHENOTYPES, legacy) is excluded


def _annotation(text: str, start: int, end: int, cid: str, name: str) -> Annotation:
    return Annotation("d", start, end, text[start:end], cid, name, 1.0, "dictionary")


def test_qualify_keeps_concepts_of_other_kgs_and_stops_at_a_semicolon() -> None:
    text = "mild; ataxia and asthma"
    found = [
        _annotation(text, 0, 4, "HP:0012825", "Mild"),
        _annotation(text, 6, 12, "HP:0001251", "Ataxia"),
        _annotation(text, 17, 23, "T:1", "asthma"),
    ]
    types = [("Clinical modifier",), (NERVOUS,), ()]
    got = qualify(text, found, types, sentence_spans(text))
    assert [(a.text, a.modifiers) for a in got] == [("ataxia", ()), ("asthma", ())]


def test_modifiers_reach_the_json_row_brat_and_the_service_schema() -> None:
    from termnorm.annotate.formats import brat_ann
    from termnorm.serve.annotate_schemas import AnnotationOut

    text = "mild ataxia"
    found = _annotation(text, 5, 11, "HP:0001251", "Ataxia")
    found = Annotation(**{**found.__dict__, "modifiers": ("HP:0012825 Mild",)})
    row = found.to_dict()
    assert row["modifiers"] == ["HP:0012825 Mild"]
    assert Annotation.from_dict(row) == found
    assert "#1\tAnnotatorNotes T1\tHP:0001251 Ataxia; modifiers: HP:0012825 Mild\n" in brat_ann(
        [found]
    )
    assert AnnotationOut.model_validate(row).modifiers == ["HP:0012825 Mild"]  # type: ignore[attr-defined]


def test_the_service_reports_modifiers_and_a_request_may_ask_for_all(hpo_index: Path) -> None:
    pytest.importorskip("fastapi")
    from _serve_fixtures import serving

    documents = [{"id": "d", "text": "Autosomal dominant inheritance of mild ataxia."}]
    marfan = [{"id": "m", "text": MARFAN}]
    with serving(hpo_index, token="t0ken") as client:
        default = client.post("/v1/annotate", json={"documents": documents, "min_score": 0.99})
        every = client.post(
            "/v1/annotate", json={"documents": documents, "min_score": 0.99, "findings": "all"}
        )
        wrong = client.post("/v1/annotate", json={"documents": documents, "findings": "some"})
        disease = client.post("/v1/annotate", json={"documents": marfan, "min_score": 0.99})
    (row,) = default.json()["results"][0]["annotations"]
    assert (row["text"], row["modifiers"]) == ("ataxia", ["HP:0012825 Mild"])
    assert every.status_code == 200, every.text
    rows = every.json()["results"][0]["annotations"]
    assert [(r["concept_id"], r["modifiers"]) for r in rows] == [
        ("HP:0000006", []),
        ("HP:0012825", []),
        ("HP:0001251", []),
    ]
    assert wrong.status_code == 422 and "phenotypes" in wrong.text
    rows = disease.json()["results"][0]["annotations"]
    assert [r["concept_id"] for r in rows] == ["HP:0001251"]


@pytest.fixture()
def cli(
    hpo_index: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Callable[..., tuple[int, str]]:
    """``termnorm annotate TEXT ARGS`` over the HPO index: (exit code, stdout)."""
    from _cli import run_main

    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")

    def run(text: str, *args: str) -> tuple[int, str]:
        given = ["annotate", text, "--index", str(hpo_index), "--min-score", "0.99", *args]
        code, out, _ = run_main(given, capsys)
        return code, out

    return run


def test_the_cli_shows_modifiers_and_takes_findings(cli: Callable[..., tuple[int, str]]) -> None:
    code, out = cli("She has mild ataxia.")
    assert code == 0 and "modifiers" in out and "HP:0012825 Mild" in out
    code, out = cli("She has mild ataxia.", "--findings", "all", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [(r["concept_id"], r["modifiers"]) for r in rows] == [
        ("HP:0012825", []),
        ("HP:0001251", []),
    ]


def test_the_python_api_takes_findings(
    hpo_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import termnorm

    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    text = "She has mild ataxia."
    (found,) = termnorm.annotate(text, index=hpo_index, min_score=0.99)
    assert (found.concept_id, found.modifiers) == ("HP:0001251", ("HP:0012825 Mild",))
    every = termnorm.annotate(text, index=hpo_index, min_score=0.99, findings="all")
    assert [a.concept_id for a in every] == ["HP:0012825", "HP:0001251"]
    found = termnorm.annotate(MARFAN, index=hpo_index, min_score=0.99)
    assert [a.concept_id for a in found] == ["HP:0001251"]  # through build_annotator


def test_the_spacy_component_takes_findings(
    hpo_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spacy = pytest.importorskip("spacy")
    import importlib

    importlib.import_module("termnorm.integrations.spacy_component")  # registers the factory
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    config = {"index": str(hpo_index), "min_score": 0.99}
    nlp = spacy.blank("en")
    nlp.add_pipe("termnorm", config=config)
    (ent,) = nlp("She has mild ataxia.").ents
    assert (ent.text, ent._.termnorm_annotation.modifiers) == ("ataxia", ("HP:0012825 Mild",))
    every = spacy.blank("en")
    every.add_pipe("termnorm", config={**config, "findings": "all"})
    assert [e.text for e in every("She has mild ataxia.").ents] == ["mild", "ataxia"]
