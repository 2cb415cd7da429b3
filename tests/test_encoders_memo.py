"""MemoEncoder: each distinct text reaches the wrapped encoder once; vectors are unchanged."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from _index_fakes import DIM, KeyedEncoder
from termnorm.encoders import MemoEncoder
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph


def test_each_distinct_text_is_encoded_once_in_one_call() -> None:
    inner = KeyedEncoder()
    memo = MemoEncoder(inner)
    first = memo.encode(["alpha disease", "beta disease", "alpha disease"])
    second = memo.encode(["beta disease", "new text"])
    assert inner.calls == [["alpha disease", "beta disease"], ["new text"]]
    np.testing.assert_array_equal(first, inner.encode(["alpha disease", "beta disease"] * 2)[:3])
    np.testing.assert_array_equal(first[1], second[0])
    np.testing.assert_array_equal(second[1], inner.encode(["new text"])[0])
    assert first.dtype == np.float32 and first.shape == (3, DIM)


def test_empty_input_gives_an_empty_float32_matrix_of_the_model_dimension() -> None:
    inner = KeyedEncoder()
    empty = MemoEncoder(inner).encode([])
    assert empty.shape == (0, DIM) and empty.dtype == np.float32
    assert inner.calls == []  # nothing to encode, nothing asked


def test_vectors_are_returned_as_float32() -> None:
    class Float64Encoder(KeyedEncoder):
        def encode(
            self,
            texts: Sequence[str],
            batch_size: int = 256,
            show_progress: bool = False,
            desc: str = "encoding",
            on_batch: Callable[[int], None] | None = None,
        ) -> np.ndarray:
            return super().encode(texts).astype(np.float64)

    assert MemoEncoder(Float64Encoder()).encode(["zeta"]).dtype == np.float32


def test_an_index_built_through_the_memo_carries_the_model_card(tiny_kg: KnowledgeGraph) -> None:
    inner = KeyedEncoder(table={}, fingerprint="keyed-7")
    memo = MemoEncoder(inner)
    index = TermIndex.build(tiny_kg, memo, backend="exact", show_progress=False)
    direct = TermIndex.build(tiny_kg, KeyedEncoder(table={}), backend="exact", show_progress=False)
    assert index.card["model"]["fingerprint"] == "keyed-7"
    assert index.card["model"]["dimension"] == memo.dimension == DIM
    assert (memo.pooling, memo.max_length, memo.path) == (inner.pooling, inner.max_length, None)
    np.testing.assert_array_equal(index.term_vectors, direct.term_vectors)
    memo.encode(list(tiny_kg.terms["term"]))
    assert len(inner.calls) == 1  # every term was already in the memo
