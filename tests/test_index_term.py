"""TermIndex: build (T and C vectors, cleaning counts, term provenance), save/load without
re-encoding, model-mismatch refusal, every backend, and concept lookup by ID."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from _index_fakes import TABLE, KeyedEncoder, known_kg
from conftest import build_tiny_bert
from termnorm.encoders import Pooling, TermEncoder
from termnorm.errors import ArtifactMismatchError, EmptyResultError
from termnorm.index import Backend, TermIndex
from termnorm.index.lookup import UnknownConceptError
from termnorm.kg import KnowledgeGraph


@pytest.fixture(autouse=True)
def one_faiss_thread() -> Iterator[None]:
    faiss = pytest.importorskip("faiss")
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)


def test_term_and_concept_vectors_are_known() -> None:
    index = TermIndex.build(known_kg(), KeyedEncoder(), show_progress=False)
    assert index.terms["term"].tolist()[:2] == ["alpha disease", "alpha syndrome"]
    # stored as float16: each component within float16's relative rounding (2^-11)
    assert index.term_vectors.dtype == index.concept_vectors.dtype == np.float16
    np.testing.assert_allclose(index.term_vectors[1], TABLE["alpha syndrome"], rtol=2**-11)
    # C vector of A:1 = normalised mean of its two term vectors
    mean = TABLE["alpha disease"] + TABLE["alpha syndrome"]
    row = index.concept_row("A:1")
    np.testing.assert_allclose(
        index.concept_vectors[row], mean / np.linalg.norm(mean), rtol=2 * 2**-11
    )
    hit = index.search_terms(TABLE["q alpha"], 2)
    assert index.terms["term"].iloc[hit.ids[0]].tolist() == ["alpha disease", "alpha syndrome"]
    assert hit.scores[0, 0] == pytest.approx(1.0)
    assert (
        index.concepts["concept_id"].iloc[index.search_concepts(TABLE["q alpha"], 1).ids[0, 0]]
        == "A:1"
    )
    assert index.alt_ids("C:3") == ["OMIM:333"] and index.alt_ids("nope") == []


def test_each_distinct_string_is_encoded_once() -> None:
    encoder = KeyedEncoder()
    kg = known_kg(extra_terms=[("B:2", "alpha disease")])  # same string, another concept
    index = TermIndex.build(kg, encoder, show_progress=False)
    assert len(index.terms) == 8
    assert sum(len(c) for c in encoder.calls) == 7
    assert index.card["counts"]["distinct_strings"] == 7


def test_cleaning_is_counted_not_silent() -> None:
    concepts = [
        {"concept_id": "A:1", "name": "alpha disease"},
        {"concept_id": "A:1", "name": "again"},  # duplicate concept
        {"concept_id": "N:1", "name": "named only"},  # no term: name becomes a term
        {"concept_id": "E:1", "name": ""},  # no term, no name: dropped
    ]
    terms = [
        {"concept_id": "A:1", "term": "alpha disease"},
        {"concept_id": "A:1", "term": "alpha disease"},  # duplicate pair
        {"concept_id": "A:1", "term": "   "},  # empty
        {"concept_id": "X:1", "term": "orphan"},  # unknown concept
    ]
    index = TermIndex.build(
        KnowledgeGraph.from_records(concepts, terms), KeyedEncoder(), show_progress=False
    )
    counts = index.card["counts"]
    assert (counts["terms"], counts["concepts"]) == (2, 2)
    assert counts["duplicate_concepts"] == 1 and counts["concepts_without_text"] == 1
    assert counts["duplicate_terms"] == 1 and counts["empty_terms"] == 1
    assert counts["orphan_terms"] == 1 and counts["names_added_as_terms"] == 1
    assert index.terms.values.tolist() == [
        ["A:1", "alpha disease", "", False],
        ["N:1", "named only", "", True],  # a name added as a term is preferred, no source
    ]


def test_a_kg_without_terms_is_refused() -> None:
    kg = KnowledgeGraph.from_records(
        [{"concept_id": "E:1", "name": ""}], [{"concept_id": "E:1", "term": " "}]
    )
    with pytest.raises(EmptyResultError, match="no usable term"):
        TermIndex.build(kg, KeyedEncoder(), show_progress=False)


def test_save_load_round_trip_without_reencoding(
    tiny_kg_dir: Path,
    tiny_encoder: TermEncoder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = TermIndex.build(
        KnowledgeGraph.load(tiny_kg_dir), tiny_encoder, show_progress=False, kg_path=tiny_kg_dir
    )
    index.save(tmp_path / "idx")

    def no_encoding(*args: object, **kwargs: object) -> None:
        raise AssertionError("load must not re-encode")

    monkeypatch.setattr(TermEncoder, "encode", no_encoding)
    loaded = TermIndex.load(tmp_path / "idx")
    np.testing.assert_array_equal(loaded.term_vectors, index.term_vectors)
    np.testing.assert_array_equal(loaded.concept_vectors, index.concept_vectors)
    assert loaded.terms.equals(index.terms)
    assert loaded.concepts["alt_ids"].tolist() == index.concepts["alt_ids"].tolist()
    card = json.loads((tmp_path / "idx" / "index.json").read_text())
    assert card["model"]["fingerprint"] == tiny_encoder.fingerprint
    assert card["model"]["pooling"] == "mean" and card["model"]["max_length"] == 32
    assert card["model"]["dimension"] == 32
    assert card["kg"]["fingerprint"] == KnowledgeGraph.load(tiny_kg_dir).fingerprint
    assert card["kg"]["path"] == str(tiny_kg_dir.resolve())
    assert card["backend"]["terms"]["backend"] == "exact"
    assert card["counts"]["terms"] == 34 and card["termnorm_version"]
    queries = index.term_vectors[:3]
    assert (
        loaded.search_terms(queries, 4).ids.tolist() == index.search_terms(queries, 4).ids.tolist()
    )


def test_query_with_another_model_is_refused(
    tiny_kg: KnowledgeGraph, tiny_encoder: TermEncoder, tiny_bert_path: Path, tmp_path: Path
) -> None:
    index = TermIndex.build(tiny_kg, tiny_encoder, show_progress=False)
    index.save(tmp_path / "idx")
    loaded = TermIndex.load(tmp_path / "idx")
    loaded.check_encoder(tiny_encoder)  # same model: accepted
    other = TermEncoder.load(build_tiny_bert(tmp_path / "other", seed=1), device="cpu")
    with pytest.raises(ArtifactMismatchError, match=r"was built with model .* query encoder is"):
        loaded.check_encoder(other)
    cls = TermEncoder.load(tiny_bert_path, pooling=Pooling.CLS, device="cpu")
    with pytest.raises(ArtifactMismatchError, match=r"pooling mean.*pooling cls"):
        loaded.check_encoder(cls)


def test_load_encoder_uses_the_card(tiny_kg: KnowledgeGraph, tiny_encoder: TermEncoder) -> None:
    index = TermIndex.build(tiny_kg, tiny_encoder, show_progress=False)
    assert index.load_encoder(device="cpu").fingerprint == tiny_encoder.fingerprint
    index.card["model"]["path"] = "/nowhere/model"
    with pytest.raises(ArtifactMismatchError, match="is not there any more"):
        index.load_encoder()


def test_not_an_index_folder(tmp_path: Path) -> None:
    with pytest.raises(ArtifactMismatchError, match="not a termnorm index folder"):
        TermIndex.load(tmp_path)


def test_other_format_version_is_refused(tmp_path: Path) -> None:
    TermIndex.build(known_kg(), KeyedEncoder(), show_progress=False).save(tmp_path / "idx")
    card_path = tmp_path / "idx" / "index.json"
    card = json.loads(card_path.read_text())
    card["format_version"] = 99
    card_path.write_text(json.dumps(card))
    with pytest.raises(ArtifactMismatchError, match="rebuild it with 'termnorm index build'"):
        TermIndex.load(tmp_path / "idx")


@pytest.mark.parametrize(
    "backend",
    [
        Backend.EXACT,
        Backend.FAISS_FLAT,
        Backend.FAISS_HNSW,
        Backend.FAISS_IVFPQ,
        Backend.FAISS_IVF_HNSW,
    ],
)
def test_every_backend_finds_the_known_answer_and_survives_reload(
    backend: Backend, tmp_path: Path
) -> None:
    index = TermIndex.build(known_kg(), KeyedEncoder(), backend=backend, show_progress=False)
    assert index.card["backend"]["terms"]["backend"] == backend.value
    index.save(tmp_path / "idx")
    loaded = TermIndex.load(tmp_path / "idx")
    for ix in (index, loaded):
        hit = ix.search_terms(TABLE["q alpha"], 1)
        assert ix.terms["term"].iat[int(hit.ids[0, 0])] == "alpha disease"
        assert hit.scores[0, 0] == pytest.approx(1.0, abs=1e-5)  # exact score, even for PQ
    assert (tmp_path / "idx" / "term_index").is_dir() == backend.is_faiss


def provenance_kg() -> KnowledgeGraph:
    concepts = [
        {
            "concept_id": "MESH:D001",
            "name": "alpha disease",
            "semantic_types": ["Disease"],
            "alt_ids": ["OMIM:100"],
        },
        {"concept_id": "OMIM:D001", "name": "clash", "semantic_types": [], "alt_ids": []},
        {"concept_id": "HP:0002", "name": "beta", "semantic_types": [], "alt_ids": ["MESH:D001"]},
    ]
    terms = [
        {"concept_id": "MESH:D001", "term": "alpha disease", "source": "MSH", "is_preferred": True},
        {"concept_id": "HP:0002", "term": "beta", "source": "HPO", "is_preferred": False},
        {"concept_id": "MESH:D001", "term": "alpha syndrome", "source": "OMIM"},
        {"concept_id": "HP:0002", "term": "beta", "source": "HPO2", "is_preferred": True},
        {"concept_id": "OMIM:D001", "term": "clash", "source": None},
    ]
    return KnowledgeGraph.from_records(concepts, terms)


def test_terms_keep_their_kg_source_and_preferred_flag(tmp_path: Path) -> None:
    index = TermIndex.build(provenance_kg(), KeyedEncoder(), show_progress=False)
    assert index.terms.values.tolist() == [
        ["MESH:D001", "alpha disease", "MSH", True],
        ["HP:0002", "beta", "HPO", True],  # a repeated pair is preferred when any row is
        ["MESH:D001", "alpha syndrome", "OMIM", False],
        ["OMIM:D001", "clash", "", False],
    ]
    index.save(tmp_path / "idx")
    assert TermIndex.load(tmp_path / "idx").terms.equals(index.terms)


def test_concept_lookup_by_id_alt_id_or_bare_id() -> None:
    index = TermIndex.build(provenance_kg(), KeyedEncoder(), show_progress=False)
    info = index.concept("MESH:D001")
    assert (info.concept_id, info.name, info.semantic_types) == (
        "MESH:D001",
        "alpha disease",
        ("Disease",),
    )
    assert info.alt_ids == ("OMIM:100",)
    assert [(t.term, t.source, t.is_preferred) for t in info.synonyms] == [
        ("alpha disease", "MSH", True),
        ("alpha syndrome", "OMIM", False),
    ]
    assert index.concept("omim:100").concept_id == "MESH:D001"  # an alt ID, any case
    assert index.concept("100").concept_id == "MESH:D001"  # no namespace
    # "D001" is the key of two concept IDs and of an alt ID: own IDs first, then the smaller
    assert index.concept("D001").concept_id == "MESH:D001"
    assert index.concept("OMIM:D001").concept_id == "OMIM:D001"  # an exact ID always wins
    assert index.concept("HP:0002").to_dict()["synonyms"] == [
        {"term": "beta", "source": "HPO", "is_preferred": True}
    ]
    with pytest.raises(UnknownConceptError, match="no concept 'X:9' in index") as err:
        index.concept("X:9")
    assert isinstance(err.value, KeyError)


def test_index_build_max_length_defaults_to_the_folder_bound(
    tiny_encoder: TermEncoder, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from termnorm.cli.main import _register, app

    _register()
    model = tiny_encoder.save(tmp_path / "model", max_seq_length=16)  # declares 16 tokens

    def built_length(*extra: str) -> int:
        out = tmp_path / f"idx{len(extra)}"
        args = ["index", "build", "--kg", str(tiny_kg_dir), "--model", str(model)]
        result = CliRunner().invoke(app, [*args, "--out", str(out), "--json", *extra])
        assert result.exit_code == 0, result.output
        return int(TermIndex.load(out).card["model"]["max_length"])

    assert built_length() == 16  # the folder's max_seq_length is below 32
    assert built_length("--max-length", "24") == 24  # the caller's length wins


def _saved(tmp_path: Path, name: str = "idx") -> Path:
    return TermIndex.build(known_kg(), KeyedEncoder(), show_progress=False).save(tmp_path / name)


@pytest.mark.parametrize("mmap", [True, False])
def test_truncated_vectors_name_the_file_and_say_rebuild(tmp_path: Path, mmap: bool) -> None:
    folder = _saved(tmp_path)
    path = folder / "term_vectors.npy"
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(ArtifactMismatchError, match=r"term_vectors\.npy is damaged") as err:
        TermIndex.load(folder, mmap=mmap)
    assert "termnorm index build" in str(err.value)


def test_garbage_card_names_the_file(tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    (folder / "index.json").write_text("{not json")
    with pytest.raises(ArtifactMismatchError, match=r"index\.json is damaged") as err:
        TermIndex.load(folder)
    assert str(folder / "index.json") in str(err.value)
    assert "termnorm index build" in str(err.value)


def test_garbage_table_names_the_file(tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    card = json.loads((folder / "index.json").read_text())
    del card["tables"]  # an older card: no hash, the reader itself must name the file
    (folder / "index.json").write_text(json.dumps(card))
    (folder / "concepts.parquet").write_bytes(b"garbage")
    with pytest.raises(ArtifactMismatchError, match=r"concepts\.parquet is damaged"):
        TermIndex.load(folder)


def test_tables_swapped_from_another_index_are_refused(tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    other_kg = known_kg(extra_terms=[("A:1", "alpha extra")])
    other = TermIndex.build(other_kg, KeyedEncoder(), show_progress=False).save(tmp_path / "o")
    (folder / "terms.parquet").write_bytes((other / "terms.parquet").read_bytes())
    with pytest.raises(ArtifactMismatchError, match=r"terms\.parquet is not the table") as err:
        TermIndex.load(folder)
    assert "termnorm index build" in str(err.value)
    assert TermIndex.load(other).card["tables"]  # the untouched one loads


@pytest.mark.parametrize("bad", [np.nan, 0.0, np.inf])
def test_nan_or_zero_vectors_are_refused_at_build(bad: float) -> None:
    table = dict(TABLE)
    table["beta variant"] = np.full(8, bad, dtype=np.float32)
    with pytest.raises(ArtifactMismatchError, match=r"1 term\(s\).*'beta variant'"):
        TermIndex.build(known_kg(), KeyedEncoder(table), show_progress=False)
