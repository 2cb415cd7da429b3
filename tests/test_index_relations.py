"""The KG's relations in the index: cleaned at build, saved with a content hash, read on first
use, and answered by ``TermIndex.concept(id)`` as the concept's neighbours."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _index_fakes import KeyedEncoder
from conftest import make_tiny_kg
from termnorm.errors import ArtifactMismatchError
from termnorm.index import TermIndex
from termnorm.index.lookup import Direction, RelationInfo
from termnorm.kg import KnowledgeGraph


def _build() -> TermIndex:
    return TermIndex.build(make_tiny_kg(), KeyedEncoder(), show_progress=False)


MI_RELATIONS = (
    RelationInfo("isa", Direction.OUT, "T:0008", "heart disease"),
    RelationInfo("risk_factor_of", Direction.IN, "T:0002", "hypertension"),
)


def test_concept_answers_its_neighbours_both_ways() -> None:
    index = _build()
    assert index.concept("T:0001").relations == MI_RELATIONS
    heart = index.concept("T:0008").relations
    assert heart == (  # incoming only, by relation then neighbour name
        RelationInfo("isa", Direction.IN, "T:0001", "myocardial infarction"),
        RelationInfo("risk_factor_of", Direction.IN, "T:0003", "diabetes mellitus"),
    )
    assert index.concept("T:0005").relations == ()  # a concept without edges
    assert index.concept("T:0001").to_dict()["relations"][0] == {
        "relation": "isa",
        "direction": "out",
        "concept_id": "T:0008",
        "name": "heart disease",
    }


def test_relations_survive_save_and_are_read_on_first_use(tmp_path: Path) -> None:
    _build().save(tmp_path / "idx")
    card = json.loads((tmp_path / "idx" / "index.json").read_text())
    assert card["format_version"] == 3
    assert set(card["tables"]) == {"terms.parquet", "concepts.parquet", "relations.parquet"}
    assert card["counts"]["relations"] == 5
    loaded = TermIndex.load(tmp_path / "idx")
    assert loaded._relations is None  # not read by load
    assert loaded.concept("t:0001").relations == MI_RELATIONS  # any case, read now
    assert loaded.relations is not None and len(loaded.relations) == 5


def test_build_keeps_only_edges_between_indexed_concepts() -> None:
    tiny = make_tiny_kg()
    extra = pd.DataFrame(
        [
            ("T:0001", "isa", "X:404"),  # a tail the KG does not have
            ("T:0001", "isa", "T:0008"),  # a repeat
            ("T:0004", "", "T:0009"),  # no label
            (" T:0006 ", "part_of", "T:0009"),  # padded: kept, stripped
        ],
        columns=["head", "relation", "tail"],
    )
    kg = KnowledgeGraph(tiny.concepts, tiny.terms, pd.concat([tiny.relations, extra]))
    index = TermIndex.build(kg, KeyedEncoder(), show_progress=False)
    counts = index.card["counts"]
    assert (counts["relations"], counts["orphan_relations"]) == (6, 1)
    assert (counts["duplicate_relations"], counts["empty_relations"]) == (1, 1)
    assert RelationInfo("part_of", Direction.OUT, "T:0009", "lung disease") in (
        index.concept("T:0006").relations or ()
    )


def _as_format_2(folder: Path) -> None:
    """Turn a saved index into what termnorm wrote before indexes held relations."""
    card_path = folder / "index.json"
    card = json.loads(card_path.read_text())
    card["format_version"] = 2
    del card["tables"]["relations.parquet"]
    card_path.write_text(json.dumps(card))
    (folder / "relations.parquet").unlink()


def test_a_format_2_index_loads_and_says_it_has_no_relations(tmp_path: Path) -> None:
    _build().save(tmp_path / "idx")
    _as_format_2(tmp_path / "idx")
    old = TermIndex.load(tmp_path / "idx")
    info = old.concept("T:0001")
    assert info.relations is None and info.to_dict()["relations"] is None
    assert [t.term for t in info.synonyms][:2] == ["myocardial infarction", "heart attack"]


def test_a_replaced_relations_table_is_refused(tmp_path: Path) -> None:
    _build().save(tmp_path / "idx")
    other = pa.table({"head": ["T:0005"], "relation": ["isa"], "tail": ["T:0008"]})
    pq.write_table(other, tmp_path / "idx" / "relations.parquet")
    with pytest.raises(ArtifactMismatchError, match=r"relations\.parquet is not the table"):
        TermIndex.load(tmp_path / "idx")


def test_a_format_3_card_without_the_relations_hash_is_damaged(tmp_path: Path) -> None:
    _build().save(tmp_path / "idx")
    card_path = tmp_path / "idx" / "index.json"
    card = json.loads(card_path.read_text())
    del card["tables"]["relations.parquet"]
    card_path.write_text(json.dumps(card))
    with pytest.raises(ArtifactMismatchError, match=r"no content hash for relations\.parquet"):
        TermIndex.load(tmp_path / "idx")


def test_a_missing_relations_file_is_named(tmp_path: Path) -> None:
    _build().save(tmp_path / "idx")
    (tmp_path / "idx" / "relations.parquet").unlink()
    with pytest.raises(ArtifactMismatchError, match=r"relations.parquet is damaged.*missing"):
        TermIndex.load(tmp_path / "idx")


def test_saving_a_format_3_index_without_relations_is_refused(tmp_path: Path) -> None:
    built = _build()
    bare = TermIndex(
        built.terms,
        built.concepts,
        built.term_vectors,
        built.concept_vectors,
        built.card,
        built._specs["terms"],
        built._specs["concepts"],
    )
    with pytest.raises(ValueError, match=r"relations=relation_table\(kg, concepts\)"):
        bare.save(tmp_path / "idx")
    assert not (tmp_path / "idx").exists()
