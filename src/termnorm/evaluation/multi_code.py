"""Scores of multi-code output (the MTCG paper's tables): exact code sets, implication numbers,
recall@k.

Liang, Xue & Ruan 2021 score a mention as correct only when its predicted code set equals the
gold set (Table 2/3: uni-implication, multi-implication, total), the implication-number head
by class (Table 8) and the candidate generator by recall@k (Table 7). IDs compare through
``keys``: a function from an ID to the set of comparison keys it stands for (default
``{id_key(id)}``; pass a concept's own and alternative IDs, e.g. via
:func:`concept_keys`, so that ``OMIM:608446`` and ``MESH:D009203`` of one concept agree).

* :func:`code_set_accuracy`: ``multi_code_uni``, ``multi_code_multi``, ``multi_code_total``
  (shares in [0, 1]) and the counts ``multi_code_n_uni``, ``multi_code_n_multi``.
* :func:`implication_accuracy`: ``implication_1``, ``implication_2``, ``implication_3``
  (accuracy among mentions whose gold class is 1, 2, ≥3), ``implication_uni`` (= class 1),
  ``implication_multi`` (gold ≥ 2: predicted class equals the gold class),
  ``implication_total``, and the counts ``implication_n_<class>``.
* :func:`recall_at_k`: ``recall@k`` — a mention is recalled at k when *every* gold code is
  among its first k ranked candidates (for one gold code, the usual acc@k).
* :func:`multi_code_metrics` with :class:`RowRecorder`: both tables from a ranked matcher's
  multi-code rows (``termnorm eval normalize --ranker R --multi``).

A class with no mention is absent from the output (not 0).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from termnorm.kg.ids import id_key
from termnorm.search.candidate import Candidate, RowResult, candidates_or_raise

__all__ = [
    "RECALL_KS",
    "RowRecorder",
    "code_set_accuracy",
    "concept_keys",
    "implication_accuracy",
    "multi_code_metrics",
    "recall_at_k",
]

RECALL_KS = (1, 5, 10, 20, 50)
Keys = Callable[[str], Collection[str]]


def _default_keys(concept_id: str) -> Collection[str]:
    return {id_key(concept_id)}


def concept_keys(alt_ids: Mapping[str, Collection[str]]) -> Keys:
    """``keys`` for IDs of concepts with alternative IDs (``{concept_id: alt_ids}``): an ID
    stands for its own key and those of its concept's alternative IDs."""
    table = {
        id_key(cid): frozenset({id_key(cid), *(id_key(a) for a in alts)})
        for cid, alts in alt_ids.items()
    }

    def keys(concept_id: str) -> Collection[str]:
        return table.get(id_key(concept_id), frozenset({id_key(concept_id)}))

    return keys


def _same_set(predicted: Collection[str], gold: Collection[str], keys: Keys) -> bool:
    """Every predicted code is a gold code, every gold code is predicted (through ``keys``)."""
    gold_keys = [set(keys(g)) | {id_key(g)} for g in gold]
    pred_keys = [set(keys(p)) | {id_key(p)} for p in dict.fromkeys(predicted)]
    if len(pred_keys) != len(gold_keys):
        return False
    return all(any(p & g for p in pred_keys) for g in gold_keys) and all(
        any(p & g for g in gold_keys) for p in pred_keys
    )


def code_set_accuracy(
    predicted: Sequence[Collection[str]],
    gold: Sequence[Collection[str]],
    keys: Keys | None = None,
) -> dict[str, float]:
    """Exact-set accuracy split by gold size (module doc); mentions without gold are skipped.

    Raises:
        ValueError: the two sequences differ in length.
    """
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predicted code sets for {len(gold)} gold sets")
    keys = keys or _default_keys
    uni = [_same_set(p, g, keys) for p, g in zip(predicted, gold, strict=True) if len(g) == 1]
    multi = [_same_set(p, g, keys) for p, g in zip(predicted, gold, strict=True) if len(g) > 1]
    out: dict[str, float] = {
        "multi_code_n_uni": float(len(uni)),
        "multi_code_n_multi": float(len(multi)),
    }
    if uni:
        out["multi_code_uni"] = sum(uni) / len(uni)
    if multi:
        out["multi_code_multi"] = sum(multi) / len(multi)
    if uni or multi:
        out["multi_code_total"] = (sum(uni) + sum(multi)) / (len(uni) + len(multi))
    return out


def implication_accuracy(predicted: Sequence[int], gold_counts: Sequence[int]) -> dict[str, float]:
    """Accuracy of predicted implication numbers (1, 2, 3 = ≥3) against gold code counts.

    Raises:
        ValueError: lengths differ, a gold count below 1 or a prediction outside 1..3.
    """
    if len(predicted) != len(gold_counts):
        raise ValueError(f"{len(predicted)} predictions for {len(gold_counts)} gold counts")
    if any(int(p) not in (1, 2, 3) for p in predicted):
        raise ValueError("implication predictions must be 1, 2 or 3 (3 = three or more)")
    if any(int(g) < 1 for g in gold_counts):
        raise ValueError("every gold count must be at least 1 (drop unlinkable mentions)")
    pairs = [(int(p), min(int(g), 3)) for p, g in zip(predicted, gold_counts, strict=True)]
    out: dict[str, float] = {}
    for cls in (1, 2, 3):
        hits = [p == g for p, g in pairs if g == cls]
        out[f"implication_n_{cls}"] = float(len(hits))
        if hits:
            out[f"implication_{cls}"] = sum(hits) / len(hits)
    if "implication_1" in out:
        out["implication_uni"] = out["implication_1"]
    multi = [p == g for p, g in pairs if g > 1]
    if multi:
        out["implication_multi"] = sum(multi) / len(multi)
    if pairs:
        out["implication_total"] = sum(p == g for p, g in pairs) / len(pairs)
    return out


def recall_at_k(
    ranked: Sequence[Sequence[str]],
    gold: Sequence[Collection[str]],
    ks: Sequence[int] = RECALL_KS,
    keys: Keys | None = None,
) -> dict[str, float]:
    """``recall@k`` per k (module doc) over the mentions with a non-empty gold set.

    Raises:
        ValueError: lengths differ, or no mention has a gold code.
    """
    if len(ranked) != len(gold):
        raise ValueError(f"{len(ranked)} rankings for {len(gold)} gold sets")
    keys = keys or _default_keys
    depths: list[int | None] = []
    for candidates, codes in zip(ranked, gold, strict=True):
        if not codes:
            continue
        cand_keys = [set(keys(c)) | {id_key(c)} for c in candidates]
        firsts = []
        for g in codes:
            gk = set(keys(g)) | {id_key(g)}
            firsts.append(next((i + 1 for i, ck in enumerate(cand_keys) if ck & gk), None))
        depths.append(None if None in firsts else max(f for f in firsts if f is not None))
    if not depths:
        raise ValueError("no mention has a gold code to recall")
    return {f"recall@{k}": sum(d is not None and d <= k for d in depths) / len(depths) for k in ks}


class RowRecorder:
    """A matcher that answers through ``inner.normalize_rows`` and keeps each text's multi-code
    output (``concept_ids``, ``implication``) for :func:`multi_code_metrics`; everything else
    (``name``, ``alt_ids``, ...) is the inner matcher's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.rows: dict[str, RowResult] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """The inner matcher's top-``k`` per text; each text's row is recorded."""
        results = self.inner.normalize_rows(texts, k)
        candidates = candidates_or_raise(results)
        self.rows.update(zip(texts, results, strict=True))
        return candidates


def multi_code_metrics(
    mentions: Sequence[tuple[str, Collection[str]]],
    rows: Mapping[str, RowResult],
    keys: Keys | None = None,
) -> dict[str, float]:
    """Table 2/3 and Table 8 scores of multi-code output: ``mentions`` are ``(searched text,
    gold IDs)`` of the linkable mentions, ``rows`` the recorded rows per text (a text without a
    row or without ``concept_ids`` predicts no code and, for Table 8, one code).

    :func:`code_set_accuracy` of the predicted code sets plus :func:`implication_accuracy` of
    the predicted implication numbers.
    """
    predicted: list[tuple[str, ...]] = []
    numbers: list[int] = []
    for text, _ in mentions:
        row = rows.get(text)
        predicted.append(tuple(row.concept_ids or ()) if row is not None else ())
        numbers.append((row.implication or 1) if row is not None else 1)
    gold = [tuple(g) for _, g in mentions]
    out = code_set_accuracy(predicted, gold, keys)
    out.update(implication_accuracy(numbers, [len(g) for g in gold]))
    return out
