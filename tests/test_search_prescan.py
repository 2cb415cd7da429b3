"""The int8 pre-scan answers single queries exactly as the exact backend does."""

from __future__ import annotations

import numpy as np
import pytest

from _search_fakes import TABLE, DictEncoder, make_space
from termnorm.encoders.int8_kernel import Int8Kernel, _both_ops, kernel_is_exact
from termnorm.index.exact import exact_search
from termnorm.search import prescan as prescan_mod
from termnorm.search.parts import IndexTerms
from termnorm.search.prescan import MAX_QUERIES, Int8Prescan
from termnorm.search.strategies import SearchMode

pytest.importorskip("onnxruntime")


def _unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("kernel", [None, *Int8Kernel])
@pytest.mark.parametrize("k", [1, 5, 69])
def test_prescan_finds_the_exact_top_k(k: int, kernel: Int8Kernel | None) -> None:
    # the real int8 GEMM of the CPU running the test: the layout the guard picks (None),
    # then every layout this CPU multiplies exactly (a saturating one is never picked here)
    if kernel is not None and not kernel_is_exact(_both_ops, kernel):
        pytest.skip(f"the {kernel.value} layout saturates on this CPU")
    rng = np.random.default_rng(0)
    rows = _unit_rows(rng, 4000, 48)
    scan = Int8Prescan(rows, block_rows=1000, kernel=kernel)  # several quantization blocks
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


def test_concurrent_first_searches_build_the_prescan_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading
    import time

    from termnorm.search import parts as parts_mod

    built: list[int] = []

    class Counted(Int8Prescan):
        def __init__(self, vectors: np.ndarray) -> None:
            built.append(1)
            time.sleep(0.05)  # widen the window in which a second build could start
            super().__init__(vectors)

    monkeypatch.setattr(parts_mod, "Int8Prescan", Counted)
    part = make_space(DictEncoder(TABLE)).index_terms()
    query = TABLE["q_alpha"][None]
    want = exact_search(part.vectors, query, 2).ids
    answers: list[np.ndarray] = []

    def two_searches() -> None:
        for _ in range(2):
            answers.append(part.search(query, 2).ids)

    threads = [threading.Thread(target=two_searches) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == [1]
    assert len(answers) == 32
    for ids in answers:
        np.testing.assert_array_equal(ids, want)


def test_prepare_builds_the_prescan_before_any_search_and_synonyms_share_it() -> None:
    space = make_space(DictEncoder(TABLE))
    space.prepare()
    part = space.index_terms()
    assert isinstance(part._prescan, Int8Prescan)
    with_synonyms, _report = space.with_synonyms([("dx", ("X:2",))])
    assert with_synonyms.index_terms() is part  # adding synonyms builds no second pre-scan
    assert with_synonyms.parts(SearchMode.TERM.strategy.first) == [part]
