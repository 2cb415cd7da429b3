"""The int8 pre-scan answers single queries exactly as the exact backend does."""

from __future__ import annotations

import numpy as np
import pytest

from _search_fakes import TABLE, DictEncoder, make_space
from termnorm.index.exact import exact_search
from termnorm.search import prescan as prescan_mod
from termnorm.search.parts import IndexTerms
from termnorm.search.prescan import MAX_QUERIES, Int8Prescan
from termnorm.search.strategies import SearchMode

pytest.importorskip("onnxruntime")


def _unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("k", [1, 5, 69])
def test_prescan_finds_the_exact_top_k(k: int) -> None:
    rng = np.random.default_rng(0)
    rows = _unit_rows(rng, 4000, 48)
    scan = Int8Prescan(rows, block_rows=1000)  # several quantization blocks
    # queries near stored rows (a clear top) and random ones (a flat top)
    near = rows[rng.choice(4000, 10)] + 0.1 * _unit_rows(rng, 10, 48)
    queries = np.concatenate(
        [near / np.linalg.norm(near, axis=1, keepdims=True), _unit_rows(rng, 10, 48)]
    )
    for q in queries:
        got = scan.search(q[None], k)
        want = exact_search(rows, q[None], k)
        np.testing.assert_array_equal(got.ids, want.ids)
        np.testing.assert_allclose(got.scores, want.scores, atol=1e-6)


def test_batches_and_flat_queries_go_to_the_exact_search(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    rows = _unit_rows(rng, 500, 16)
    scan = Int8Prescan(rows)
    batch = _unit_rows(rng, MAX_QUERIES + 1, 16)
    got = scan.search(batch, 3)
    np.testing.assert_array_equal(got.ids, exact_search(rows, batch, 3).ids)
    monkeypatch.setattr(prescan_mod, "MAX_CANDIDATE_SHARE", 0.0)  # every query too flat
    q = batch[:1]
    np.testing.assert_array_equal(scan.search(q, 3).ids, exact_search(rows, q, 3).ids)


def test_index_terms_build_the_prescan_at_the_second_single_query() -> None:
    space = make_space(DictEncoder(TABLE))
    (part,) = space.parts(SearchMode.TERM.strategy.first)
    assert isinstance(part, IndexTerms)
    query = TABLE["q_alpha"][None]
    first = part.search(query, 2)
    assert part._prescan is None  # a one-shot command does not pay for it
    second = part.search(query, 2)
    assert isinstance(part._prescan, Int8Prescan)
    np.testing.assert_array_equal(first.ids, second.ids)
