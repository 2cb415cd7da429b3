"""Exact blocked search: known answers, padding, deterministic ties, blocking, memmap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from termnorm.index import ExactIndex, SearchResult, exact_search, merge_results
from termnorm.index.exact import select_topk


def brute_force(database: np.ndarray, queries: np.ndarray, k: int) -> SearchResult:
    """Full sort by (-score, id): the definition exact search must match."""
    scores = queries @ database.T
    ids = np.broadcast_to(np.arange(len(database)), scores.shape)
    order = np.lexsort((ids, -scores), axis=-1)[:, :k]
    return SearchResult(np.take_along_axis(scores, order, 1), order)


def random_unit(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_known_answer_on_basis_vectors() -> None:
    database = np.eye(5, dtype=np.float32)
    result = exact_search(database, database[[2, 4]], k=1)
    assert result.ids.tolist() == [[2], [4]]
    assert result.scores.tolist() == [[1.0], [1.0]]


def test_fewer_vectors_than_k_pads_with_minus_one() -> None:
    database = np.eye(3, dtype=np.float32)
    result = exact_search(database, database[:1], k=5)
    assert result.ids.tolist() == [[0, 1, 2, -1, -1]]
    assert np.isneginf(result.scores[0, 3:]).all()
    assert result.scores.dtype == np.float32 and result.ids.dtype == np.int64


def test_empty_database_and_empty_queries() -> None:
    empty = np.empty((0, 4), dtype=np.float32)
    assert exact_search(empty, np.ones((2, 4)), k=2).ids.tolist() == [[-1, -1], [-1, -1]]
    assert exact_search(np.eye(4), np.empty((0, 4)), k=2).ids.shape == (0, 2)


@pytest.mark.parametrize("block_bytes", [1, 64, 1 << 20])
def test_ties_break_by_smaller_id_across_blocks(block_bytes: int) -> None:
    # rows 3, 5, 7, 8 are the same vector; any block layout must return the smaller ids
    database = np.tile(np.eye(4, dtype=np.float32)[1], (10, 1))
    database[[3, 5, 7, 8]] = np.eye(4, dtype=np.float32)[0]
    result = exact_search(database, np.eye(4, dtype=np.float32)[:1], k=3, block_bytes=block_bytes)
    assert result.ids.tolist() == [[3, 5, 7]]


def test_select_topk_fixes_ties_straddling_the_kth_place() -> None:
    scores = np.array([[0.5, 0.9, 0.5, 0.5, 0.1]], dtype=np.float32)
    ids = np.array([[40, 10, 30, 20, 0]])
    assert select_topk(scores, ids, 2).ids.tolist() == [[10, 20]]


@pytest.mark.parametrize("block_bytes", [16 * 7, 4096, 1 << 26])
def test_matches_brute_force_on_random_vectors(block_bytes: int) -> None:
    database, queries = random_unit(300, 16, seed=0), random_unit(25, 16, seed=1)
    got = exact_search(database, queries, k=7, block_bytes=block_bytes)
    want = brute_force(database, queries, 7)
    assert got.ids.tolist() == want.ids.tolist()
    np.testing.assert_allclose(got.scores, want.scores, rtol=1e-6)


def test_merge_results_keeps_best_of_both() -> None:
    a = SearchResult(np.array([[0.9, 0.2]], np.float32), np.array([[1, 2]]))
    b = SearchResult(np.array([[0.5, -np.inf]], np.float32), np.array([[7, -1]]))
    merged = merge_results(a, b, 3)
    assert merged.ids.tolist() == [[1, 7, 2]]


def test_index_add_save_and_memory_mapped_load(tmp_path: Path) -> None:
    vectors = random_unit(50, 8, seed=2)
    index = ExactIndex(8)
    index.add(vectors[:20])
    index.add(vectors[20:])
    assert len(index) == 50
    index.save(tmp_path / "exact")
    loaded = ExactIndex.load(tmp_path / "exact")
    assert isinstance(loaded.vectors.base, np.memmap)  # not read into memory
    queries = random_unit(4, 8, seed=3)
    assert loaded.search(queries, 5).ids.tolist() == index.search(queries, 5).ids.tolist()


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        exact_search(np.eye(3), np.eye(3), k=0)
    with pytest.raises(ValueError, match="dimension 3"):
        exact_search(np.eye(3), np.ones((1, 4)), k=1)
    with pytest.raises(ValueError, match="dimension 8"):
        ExactIndex(8).add(np.ones((2, 3)))
