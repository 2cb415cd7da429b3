"""float16 vector storage and streaming builds: files written and read by blocks, exact search
over float16 rows, the tiny KG's index against float32 search, older float32 indexes,
chunked encoding and blockwise backend filling (no full float32 copy), memory in the card."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from _index_fakes import TABLE, KeyedEncoder, known_kg
from termnorm.encoders import TermEncoder
from termnorm.errors import ArtifactMismatchError
from termnorm.index import Backend, ExactIndex, TermIndex, exact_search
from termnorm.index.choose import BackendSpec, estimate_bytes
from termnorm.index.factory import build_vector_index, training_sample
from termnorm.index.faiss_backend import FaissIndex
from termnorm.index.vectors import NpyRows, NpyWriter, as_stored, iter_blocks
from termnorm.kg import KnowledgeGraph

# float16 keeps 11 significant bits: a product of unit vectors moves by at most 2^-11
F16_SCORE_BOUND = 2.0**-11


def units(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def one_faiss_thread() -> Iterator[None]:
    faiss = pytest.importorskip("faiss")
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)


def test_npy_writer_and_rows_round_trip(tmp_path: Path) -> None:
    x = units(1000, 16, seed=0)
    with NpyWriter(tmp_path / "v.npy", 1000, 16) as writer:
        for start in range(0, 1000, 300):
            writer.append(x[start : start + 300])
    stored = np.load(tmp_path / "v.npy")  # a valid .npy file
    assert stored.dtype == np.float16 and stored.shape == (1000, 16)
    with NpyRows(tmp_path / "v.npy") as rows:
        assert rows.shape == (1000, 16) and len(rows) == 1000
        np.testing.assert_array_equal(rows[250:750], stored[250:750])
        np.testing.assert_array_equal(rows[np.array([3, 999])], stored[[3, 999]])
        blocks = list(iter_blocks(rows, block_rows=256))
    assert [s for s, _ in blocks] == [0, 256, 512, 768]
    assert all(b.dtype == np.float32 and len(b) <= 256 for _, b in blocks)
    np.testing.assert_allclose(np.concatenate([b for _, b in blocks]), x, atol=2**-11)


def test_npy_writer_refuses_a_wrong_row_count(tmp_path: Path) -> None:
    writer = NpyWriter(tmp_path / "v.npy", 10, 4)
    writer.append(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="4 rows written, 10 announced"):
        writer.close()
    other = NpyWriter(tmp_path / "w.npy", 2, 4)
    with pytest.raises(ValueError, match="more than the 2 rows"), other:
        other.append(np.zeros((3, 4), np.float32))


@pytest.mark.parametrize("block_bytes", [1 << 10, 1 << 26])
def test_exact_search_over_float16_equals_float32_search_of_the_rounded_rows(
    block_bytes: int,
) -> None:
    database, queries = units(3000, 32, seed=1), units(50, 32, seed=2)
    half = as_stored(database)
    got = exact_search(half, queries, 10, block_bytes=block_bytes)
    want = exact_search(half.astype(np.float32), queries, 10)
    np.testing.assert_array_equal(got.ids, want.ids)
    np.testing.assert_allclose(got.scores, want.scores, rtol=1e-6)
    # and within the float16 bound of the unrounded float32 scores
    full = exact_search(database, queries, 10)
    assert np.abs(got.scores[:, 0] - full.scores[:, 0]).max() <= F16_SCORE_BOUND


def test_exact_index_keeps_float16_until_made_resident(tmp_path: Path) -> None:
    half = as_stored(units(500, 8, seed=3))
    np.save(tmp_path / "v.npy", half)
    mapped = ExactIndex.from_vectors(np.load(tmp_path / "v.npy", mmap_mode="r"))
    assert mapped.vectors.dtype == np.float16 and mapped.nbytes == 500 * 8 * 2
    queries = units(7, 8, seed=4)
    before = mapped.search(queries, 5)
    resident = mapped.resident()
    assert resident.vectors.dtype == np.float32 and not isinstance(resident.vectors, np.memmap)
    assert resident.nbytes == 500 * 8 * 4
    np.testing.assert_array_equal(resident.search(queries, 5).ids, before.ids)


def test_tiny_kg_index_search_equals_float32_search_within_the_bound(
    tiny_kg: KnowledgeGraph, tiny_encoder: TermEncoder, tmp_path: Path
) -> None:
    index = TermIndex.build(tiny_kg, tiny_encoder, show_progress=False)
    index.save(tmp_path / "idx")
    loaded = TermIndex.load(tmp_path / "idx")
    assert loaded.term_vectors.dtype == np.float16
    full = tiny_encoder.encode(index.terms["term"].tolist())  # float32, as before float16
    queries = tiny_encoder.encode(["heart attack", "fever", "tumour of the lung", "xyz"])
    k = len(full)
    want = exact_search(full, queries, k)
    for ix in (index, loaded):
        got = ix.search_terms(queries, k)
        # every term's score within the bound; the order differs only between near-ties
        got_by_id = np.take_along_axis(got.scores, np.argsort(got.ids, axis=1), axis=1)
        want_by_id = np.take_along_axis(want.scores, np.argsort(want.ids, axis=1), axis=1)
        assert np.abs(got_by_id - want_by_id).max() <= F16_SCORE_BOUND
        swapped = got.ids[:, 0] != want.ids[:, 0]
        gap = want.scores[:, 0] - want.scores[:, 1]
        assert (gap[swapped] <= 2 * F16_SCORE_BOUND).all()


def test_older_float32_index_still_loads_and_searches_the_same(tmp_path: Path) -> None:
    index = TermIndex.build(known_kg(), KeyedEncoder(), show_progress=False)
    index.save(tmp_path / "idx")
    for name in ("term_vectors.npy", "concept_vectors.npy"):  # as written before float16
        path = tmp_path / "idx" / name
        np.save(path, np.load(path).astype(np.float32))
    card_path = tmp_path / "idx" / "index.json"
    card = json.loads(card_path.read_text())
    del card["vectors"]
    card["backend"]["terms"]["params"] = {}  # older cards had no residency flag
    card_path.write_text(json.dumps(card))
    old = TermIndex.load(tmp_path / "idx")
    assert old.term_vectors.dtype == np.float32
    for query in ("q alpha", "q zeta"):
        got, want = old.search_terms(TABLE[query], 3), index.search_terms(TABLE[query], 3)
        assert got.ids.tolist() == want.ids.tolist()


@pytest.mark.parametrize("version", [1, 3])
def test_other_format_versions_are_refused_with_a_rebuild_message(
    version: int, tmp_path: Path
) -> None:
    TermIndex.build(known_kg(), KeyedEncoder(), show_progress=False).save(tmp_path / "idx")
    card_path = tmp_path / "idx" / "index.json"
    card = json.loads(card_path.read_text())
    card["format_version"] = card["format_version"] + (version - 2) * 1000  # never readable
    card_path.write_text(json.dumps(card))
    with pytest.raises(ArtifactMismatchError, match="rebuild it with 'termnorm index build'"):
        TermIndex.load(tmp_path / "idx")


def test_build_encodes_in_chunks_and_scatters_repeated_strings() -> None:
    encoder = KeyedEncoder()  # records every encode call
    kg = known_kg(extra_terms=[("B:2", "alpha disease"), ("C:3", "zeta one")])
    index = TermIndex.build(kg, encoder, show_progress=False, chunk_size=2)
    assert [len(c) for c in encoder.calls] == [2, 2, 2, 1]  # 7 distinct strings
    assert index.term_vectors.dtype == np.float16
    for row, term in enumerate(index.terms["term"]):  # repeated strings share their vector
        np.testing.assert_allclose(index.term_vectors[row], TABLE[term], atol=2**-11)
    whole = TermIndex.build(kg, KeyedEncoder(), show_progress=False)
    np.testing.assert_array_equal(index.term_vectors, whole.term_vectors)
    np.testing.assert_array_equal(index.concept_vectors, whole.concept_vectors)


def test_backend_is_filled_block_by_block_from_float16(
    one_faiss_thread: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = as_stored(units(5000, 16, seed=5))
    added: list[tuple[int, np.dtype]] = []
    add = FaissIndex.add

    def spy(self: FaissIndex, vectors: np.ndarray) -> None:
        added.append((len(vectors), vectors.dtype))
        add(self, vectors)

    monkeypatch.setattr(FaissIndex, "add", spy)
    starts: list[int] = []
    spec = BackendSpec(Backend.FAISS_IVFPQ, {"nlist": 16, "m": 4, "nbits": 6, "nprobe": 4})
    index = build_vector_index(
        spec, stored, block_rows=1024, on_block=lambda s, b: starts.append(s)
    )
    assert starts == [0, 1024, 2048, 3072, 4096]
    # the largest float32 array handed to faiss is one block, never all 5000 rows
    assert max(n for n, _ in added) == 1024 and {d for _, d in added} == {np.dtype(np.float32)}
    assert len(index) == 5000


def test_training_sample_reads_spaced_runs() -> None:
    x = np.arange(1000, dtype=np.float32)[:, None] * np.ones((1, 4), np.float32)
    sample = training_sample(x, 100, runs=10)
    assert len(sample) == 100
    firsts = sample[::10, 0]
    assert firsts[0] == 0 and firsts[-1] == 990 and (np.diff(firsts) > 10).all()
    assert len(training_sample(x, 5000)) == 1000


@pytest.mark.parametrize(
    ("backend", "params"),
    [
        (Backend.FAISS_FLAT, {}),
        (Backend.FAISS_HNSW, {"m": 8, "ef_construction": 40, "ef_search": 32}),
        (Backend.FAISS_IVFPQ, {"nlist": 16, "m": 8, "nbits": 6, "nprobe": 4}),
        (Backend.FAISS_IVF_HNSW, {"nlist": 16, "m": 8, "nbits": 6, "nprobe": 4,
                                  "hnsw_m": 8, "ef_search": 16}),
    ],
)  # fmt: skip
def test_estimated_bytes_match_the_built_structure(
    one_faiss_thread: None, backend: Backend, params: dict[str, int]
) -> None:
    stored = as_stored(units(4000, 32, seed=6))
    index = build_vector_index(BackendSpec(backend, params), stored)
    assert isinstance(index, FaissIndex)
    estimate = estimate_bytes(backend, 4000, 32, index.params)
    # HNSW upper levels are not counted
    assert 0.7 * estimate <= index.nbytes <= 1.3 * estimate


def test_card_records_budget_backend_and_bytes(one_faiss_thread: None) -> None:
    index = TermIndex.build(
        known_kg(), KeyedEncoder(), backend="auto", memory_budget=1 << 30, show_progress=False
    )
    card = index.card
    assert card["memory_budget"] == 1 << 30 and card["vectors"] == {"dtype": "float16"}
    terms = card["backend"]["terms"]
    assert terms["backend"] == "exact" and terms["params"] == {"resident": 1}
    assert terms["estimated_bytes"] == terms["actual_bytes"] == 7 * 8 * 4
    from termnorm.cli.index_cmd import _summary

    memory = dict(_summary(index.info()))["memory"]
    assert memory.startswith("budget 1,024.0 MiB; terms exact est. 0.0 MiB")
