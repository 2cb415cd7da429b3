"""faiss backends checked against exact search; missing extra; save/load round trip."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from termnorm.errors import MissingExtraError
from termnorm.index import Backend, FaissIndex, SearchResult, exact_search
from termnorm.index.exact import rerank_exact
from termnorm.index.faiss_backend import pq_subquantizers

faiss = pytest.importorskip("faiss")

DIM = 32


@pytest.fixture(autouse=True)
def one_faiss_thread() -> Iterator[None]:
    """OpenMP spinning on shared cores makes faiss very slow; tests use one thread."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)


def clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors around 40 centres (like term embeddings: synonyms cluster)."""
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(99).standard_normal((40, DIM))
    x = centres[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def recall(got: SearchResult, want: SearchResult) -> float:
    k = want.ids.shape[1]
    return float(
        np.mean([len(set(g) & set(w)) / k for g, w in zip(got.ids, want.ids, strict=True)])
    )


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, SearchResult]:
    database, queries = clustered(3000, seed=0), clustered(100, seed=1)
    return database, queries, exact_search(database, queries, 10)


def test_flat_equals_exact(data: tuple[np.ndarray, np.ndarray, SearchResult]) -> None:
    database, queries, exact = data
    index = FaissIndex(DIM, Backend.FAISS_FLAT)
    index.add(database)
    got = index.search(queries, 10)
    assert got.ids.tolist() == exact.ids.tolist()
    np.testing.assert_allclose(got.scores, exact.scores, atol=1e-5)


@pytest.mark.parametrize(
    ("backend", "params", "min_recall"),
    [
        (Backend.FAISS_HNSW, {}, 0.95),
        (Backend.FAISS_IVFPQ, {"nlist": 32, "m": 16, "nprobe": 8}, 0.5),
    ],
)
def test_approximate_recall_against_exact(
    data: tuple[np.ndarray, np.ndarray, SearchResult],
    backend: Backend,
    params: dict[str, int],
    min_recall: float,
) -> None:
    database, queries, exact = data
    index = FaissIndex(DIM, backend, **params)
    index.add(database)
    assert len(index) == len(database)
    assert recall(index.search(queries, 10), exact) >= min_recall


def test_ivfpq_reranked_against_exact_vectors_recovers_recall(
    data: tuple[np.ndarray, np.ndarray, SearchResult],
) -> None:
    database, queries, exact = data
    index = FaissIndex(DIM, Backend.FAISS_IVFPQ, nlist=32, m=16, nprobe=8)
    index.add(database)
    reranked = rerank_exact(database, queries, index.search(queries, 40), 10)
    assert recall(reranked, exact) >= 0.9
    # re-scored hits carry exact cosines
    rows = database[reranked.ids[:, 0]]
    np.testing.assert_allclose(reranked.scores[:, 0], (rows * queries).sum(1), rtol=1e-5)


def test_ivfpq_clamps_its_size_to_the_training_set() -> None:
    index = FaissIndex(DIM, Backend.FAISS_IVFPQ, nlist=1024, m=12, nbits=8)
    index.add(clustered(500, seed=3))
    assert index.params["nlist"] <= 500 // 39
    assert 2 ** index.params["nbits"] * 39 <= 500
    assert DIM % index.params["m"] == 0


@pytest.mark.parametrize("backend", [Backend.FAISS_FLAT, Backend.FAISS_HNSW, Backend.FAISS_IVFPQ])
def test_save_load_round_trip(backend: Backend, tmp_path: Path) -> None:
    database, queries = clustered(800, seed=4), clustered(5, seed=5)
    index = FaissIndex(DIM, backend)
    index.add(database)
    index.save(tmp_path / "ix")
    loaded = FaissIndex.load(tmp_path / "ix")
    assert loaded.backend is backend and loaded.params == index.params
    assert loaded.search(queries, 5).ids.tolist() == index.search(queries, 5).ids.tolist()


def test_fewer_vectors_than_k_are_padded() -> None:
    index = FaissIndex(DIM, Backend.FAISS_FLAT)
    index.add(clustered(2, seed=6))
    result = index.search(clustered(1, seed=7), 4)
    assert result.ids[0, 2:].tolist() == [-1, -1]
    assert np.isneginf(result.scores[0, 2:]).all()


def test_pq_subquantizers_divide_the_dimension() -> None:
    assert pq_subquantizers(384, 64) == 64
    assert pq_subquantizers(384, 50) == 48
    assert pq_subquantizers(30, 16) == 15


def test_missing_faiss_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # makes 'import faiss' fail
    with pytest.raises(MissingExtraError, match=r"pip install 'termnorm\[faiss\]'"):
        FaissIndex(DIM, Backend.FAISS_HNSW)


def test_not_a_faiss_backend() -> None:
    with pytest.raises(ValueError, match="not a faiss backend"):
        FaissIndex(DIM, Backend.EXACT)


class _SpyIVF:
    """An IVF-like index that records how many candidates it was asked for."""

    class backend:  # mimics the Backend enum member's attribute
        is_ivf = True

    def __init__(self, vectors: np.ndarray, params: dict[str, int]) -> None:
        self.vectors, self.params = vectors, params
        self.asked: list[int] = []

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        self.asked.append(k)
        return exact_search(self.vectors, queries, k)


def test_ivf_search_over_fetches_ten_times_k_by_default_then_rescores_exactly(
    data: tuple[np.ndarray, np.ndarray, SearchResult],
) -> None:
    from termnorm.index.term_index import RERANK_FACTOR, backend_search

    database, queries, exact = data
    spy = _SpyIVF(database, {})
    got = backend_search(spy, database, queries, 5)  # type: ignore[arg-type]
    assert RERANK_FACTOR == 10 and spy.asked == [50]
    np.testing.assert_array_equal(got.ids, exact.ids[:, :5])
    tuned = _SpyIVF(database, {"rerank": 3})  # an index's own setting wins
    backend_search(tuned, database, queries, 5)  # type: ignore[arg-type]
    assert tuned.asked == [15]
