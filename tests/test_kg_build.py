"""build_kg / build_kg_to_dir: the format registry, merging sources, streaming, errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from termnorm.errors import EmptyResultError, InputFormatError, UnknownNameError
from termnorm.kg import KnowledgeGraph, LoadReport
from termnorm.kg.build import KGFormat, SourceSpec, build_kg, build_kg_to_dir
from termnorm.kg.graph import TABLES

FIXTURES = Path(__file__).parent / "fixtures" / "kg"
HPO_DIR = FIXTURES / "hpo"
UMLS = FIXTURES / "umls"
MEDIC = FIXTURES / "medic" / "medic_biosyn.txt"


def test_format_parse_lists_known_formats() -> None:
    assert KGFormat.parse("UMLS") is KGFormat.UMLS
    with pytest.raises(UnknownNameError, match=r"unknown KG format 'rrf' .* Known: umls, obo, hpo"):
        SourceSpec("rrf", UMLS)


def test_bad_specs() -> None:
    with pytest.raises(
        ValueError, match=r"unknown option\(s\) colour for format 'tsv'; known: delimiter"
    ):
        build_kg([SourceSpec(KGFormat.TSV, FIXTURES / "dict" / "dictionary.tsv", {"colour": 1})])
    with pytest.raises(ValueError, match="'medic' needs a file or folder path"):
        build_kg([SourceSpec(KGFormat.MEDIC)])
    with pytest.raises(ValueError, match="no source given"):
        build_kg([])


def test_hpo_with_annotations_drops_dangling_edge() -> None:
    kg, [report] = build_kg([SourceSpec(KGFormat.HPO, HPO_DIR)])
    assert kg.counts() == {"concepts": 25, "terms": 38, "relations": 32, "relation_labels": 3}
    assert report.dropped["relation: endpoint not a concept of the KG"] == 1
    assert report.kept["relations"] == 32  # reports add up to the tables
    assert kg.card["sources"][0]["options"]["with_annotations"] is True
    assert kg.fingerprint == ""  # not saved yet


def test_merge_sources_same_ids() -> None:
    # MEDIC's OMIM:607208 (Dravet) is also an HPO-annotated disease: they merge
    kg, reports = build_kg([SourceSpec(KGFormat.HPO, HPO_DIR), SourceSpec(KGFormat.MEDIC, MEDIC)])
    medic_report = reports[1]
    assert len(kg.concepts) == 25 + 19 - 2  # OMIM:607208 and OMIM:157300 merge
    assert medic_report.dropped["concept: merged into the same ID from an earlier record"] == 2
    dravet = kg.terms[kg.terms.concept_id == "OMIM:607208"]
    assert dravet.term.tolist() == [
        "Dravet syndrome",
        "SEVERE MYOCLONIC EPILEPSY OF INFANCY",
        "SMEI",
    ]
    assert medic_report.dropped["term: duplicate of an earlier source's term"] == 2
    # the name comes from the first source; a later source's name is not preferred
    assert dravet.is_preferred.tolist() == [True, False, False]
    assert kg.concept_names()["OMIM:607208"] == "Dravet syndrome"
    assert sum(r.kept["concepts"] for r in reports) == len(kg.concepts)
    assert sum(r.kept["terms"] for r in reports) == len(kg.terms)


def test_merge_unions_types_and_alt_ids(tmp_path: Path) -> None:
    ctd = FIXTURES / "medic" / "ctd_diseases.tsv"
    kg, _ = build_kg([SourceSpec("medic", MEDIC), SourceSpec("medic", ctd)])  # type: ignore[arg-type]
    row = kg.concepts.set_index("concept_id").loc["MESH:D003924"]
    assert row["alt_ids"] == ["OMIM:125853", "DO:DOID:9352"]
    assert row["semantic_types"] == ["Metabolic disease", "Endocrine system disease"]
    assert row["name"] == "Diabetes Mellitus, Type 2"


def test_empty_result_is_an_error(tmp_path: Path) -> None:
    spec = SourceSpec(KGFormat.UMLS, UMLS, {"langs": "SPA", "sabs": "MSH"})
    with pytest.raises(EmptyResultError, match="no concept or no term left after loading umls:"):
        build_kg([spec])
    with pytest.raises(EmptyResultError, match="check the filters"):
        build_kg_to_dir([spec], tmp_path / "kg")
    assert not (tmp_path / "kg").exists()


def test_malformed_input_propagates(tmp_path: Path) -> None:
    path = tmp_path / "d.tsv"
    path.write_text("C1\tok\n\n\nbroken-line-without-tab\n")
    with pytest.raises(InputFormatError, match=r"d\.tsv:4:"):
        build_kg([SourceSpec(KGFormat.TSV, path)])


def test_streaming_umls_matches_in_memory(tmp_path: Path) -> None:
    options = {"one_direction": True}
    card, [report] = build_kg_to_dir([SourceSpec(KGFormat.UMLS, UMLS, options)], tmp_path / "s")
    streamed = KnowledgeGraph.load(tmp_path / "s")
    in_memory, _ = build_kg([SourceSpec(KGFormat.UMLS, UMLS, options)])
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(streamed, name), getattr(in_memory, name))
    assert card["counts"] == in_memory.counts() == streamed.card["counts"]
    assert card["fingerprint"] == streamed.fingerprint != ""
    assert card["reports"][0]["kept"]["concepts"] == report.kept["concepts"] == 20
    assert card["sources"][0]["options"]["one_direction"] is True
    for name, schema in TABLES.items():
        assert pq.read_schema(tmp_path / "s" / f"{name}.parquet").remove_metadata() == schema


def test_streaming_writes_several_chunks(tmp_path: Path) -> None:
    from termnorm.kg.records import LoadReport
    from termnorm.kg.stream import write_records
    from termnorm.kg.umls import load_umls

    records = load_umls(UMLS, LoadReport("umls"))
    card = write_records(records, tmp_path / "kg", card={"note": "x"}, chunk_rows=4)
    assert pq.ParquetFile(tmp_path / "kg" / "terms.parquet").num_row_groups == 11  # 42 rows / 4
    assert card["note"] == "x" and card["counts"]["terms"] == 42


def test_build_to_dir_in_memory_path(tmp_path: Path) -> None:
    card, _ = build_kg_to_dir([SourceSpec(KGFormat.OBO, HPO_DIR / "hp.obo")], tmp_path / "kg")
    kg = KnowledgeGraph.load(tmp_path / "kg")
    assert card["counts"]["concepts"] == len(kg.concepts) == 20
    assert kg.card["sources"] == [
        {"format": "obo", "path": str(HPO_DIR / "hp.obo"), "options": card["sources"][0]["options"]}
    ]
    assert kg.card["reports"][0]["info"]["ontology"] == "hp"


def test_options_from_strings() -> None:
    from termnorm.kg.hpo import HpoOptions
    from termnorm.options import options_from_dict

    options = options_from_dict(
        HpoOptions,
        {"with_annotations": "no", "synonym_scopes": "EXACT, NARROW", "annotations": "a.hpoa"},
        "hpo",
    )
    assert options.with_annotations is False
    assert options.synonym_scopes == ("EXACT", "NARROW")
    assert options.annotations == Path("a.hpoa")
    with pytest.raises(ValueError, match="option 'with_annotations' expects true/false"):
        options_from_dict(HpoOptions, {"with_annotations": "maybe"}, "hpo")


def test_per_source_option_string_reaches_loader() -> None:
    spec = SourceSpec(KGFormat.HPO, HPO_DIR, {"with_annotations": "false"})
    kg, _ = build_kg([spec])
    assert len(kg.concepts) == 20


def test_a_load_report_keeps_retracts_and_notes_apart() -> None:
    report = LoadReport("x:builtin")
    report.keep("concepts", "chapters")
    report.keep("terms", n=3)
    report.retract("terms", "term: duplicate")
    report.note("concepts named by a fallback field", 2)
    assert report.to_dict() == {
        "source": "x:builtin",
        "read": {},
        "kept": {"concepts": 1, "chapters": 1, "terms": 2},
        "dropped": {"term: duplicate": 1},
        "notes": {"concepts named by a fallback field": 2},
        "info": {},
    }
