"""Parallel (English name, translation) pairs from a multilingual KG, and the counter-based
batches of them that multilingual knowledge distillation trains on.

For each concept with an English term, its *pivot* is its preferred English term (else its
first English term): the text the teacher encodes. Its *translations* are all its other terms,
in every language, English synonyms included. A batch of P pairs draws P concepts that have a
translation (without replacement while the KG has enough), and for each a language uniformly
among its translations' languages, then a term of that language; it holds 2P texts: the P
pivots, then the P translations, each with the row of its pivot's teacher vector. With
``lang_balanced`` (``--lang-balanced``, as the KG sampler reads it) each pair first draws a
language uniformly among the KG's translation languages, then a translation of that language
uniformly, then its concept's pivot: a language with few parallel names (German in a KG of
31k Spanish ICD-11 names) gets as many pairs per batch as the largest.

Batch ``(step, shard)`` depends only on ``(seed, step, shard)``, so a resumed run, DDP ranks and
accumulation micro-batches reproduce one stream (as :class:`~termnorm.training.sampler.KGSampler`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from termnorm.kg import KnowledgeGraph

__all__ = ["PIVOT_LANG", "ParallelBatch", "ParallelNames", "ParallelSampler", "parallel_names"]

PIVOT_LANG = "en"
"""The language of the teacher's inputs."""


@dataclass(frozen=True)
class ParallelNames:
    """The KG's parallel names: one pivot per concept and its translations.

    Attributes:
        concept_ids: the concepts that have a pivot ``[C]``.
        pivots: their English names ``[C]`` (the teacher's texts, in this order).
        texts: every translation ``[T]``, grouped by concept (``offsets``).
        langs: the language of each translation ``[T]``.
        offsets: ``texts[offsets[c]:offsets[c + 1]]`` are concept c's translations ``[C + 1]``.
        dropped: concepts without an English term (no pivot, not trained).
    """

    concept_ids: list[str]
    pivots: list[str]
    texts: np.ndarray
    langs: np.ndarray
    offsets: np.ndarray
    dropped: int

    @property
    def with_translation(self) -> np.ndarray:
        """Indices of the concepts that have at least one translation."""
        return np.flatnonzero(np.diff(self.offsets) > 0)

    def counts(self) -> dict[str, int]:
        """Concepts, pivots and translations (per language) for the model card."""
        out = {
            "parallel_concepts": len(self.concept_ids),
            "parallel_concepts_with_translation": len(self.with_translation),
            "parallel_concepts_without_english": self.dropped,
            "parallel_translations": len(self.texts),
        }
        langs, n = np.unique(self.langs.astype(str), return_counts=True)
        for lang, count in zip(langs, n, strict=True):
            out[f"parallel_translations_{lang or 'none'}"] = int(count)
        return out


def parallel_names(kg: KnowledgeGraph, pivot_lang: str = PIVOT_LANG) -> ParallelNames:
    """The pivots and translations of ``kg`` (module doc); concepts in ID order.

    Raises:
        ValueError: no concept has both an English term and another term (naming the KG's
            languages), so there is nothing to distil.
    """
    terms = kg.terms.sort_values(["concept_id"], kind="stable")
    lang = terms["lang"].fillna("").astype(str)
    english = terms[lang == pivot_lang]
    preferred = english.sort_values("is_preferred", ascending=False, kind="stable")
    pivot_of = preferred.drop_duplicates("concept_id").set_index("concept_id")["term"]
    concept_ids = sorted(pivot_of.index.astype(str))
    dropped = int(terms["concept_id"].nunique()) - len(concept_ids)
    pivots = [str(pivot_of[c]) for c in concept_ids]
    keep = terms["concept_id"].isin(pivot_of.index)
    others = terms[keep & (terms["term"] != terms["concept_id"].map(pivot_of))]
    others = others.drop_duplicates(["concept_id", "term"])
    position = {c: i for i, c in enumerate(concept_ids)}
    rows = others["concept_id"].map(position).to_numpy(dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    offsets = np.searchsorted(rows[order], np.arange(len(concept_ids) + 1))
    names = ParallelNames(
        concept_ids=concept_ids,
        pivots=pivots,
        texts=others["term"].to_numpy(dtype=object)[order],
        langs=others["lang"].fillna("").astype(str).to_numpy(dtype=object)[order],
        offsets=offsets.astype(np.int64),
        dropped=dropped,
    )
    if len(names.with_translation) == 0:
        found = ", ".join(sorted(set(lang))) or "none"
        raise ValueError(
            f"the KG has no parallel names: no concept has both an English ({pivot_lang!r}) "
            f"term and another term (languages: {found}); build a multilingual KG, e.g. "
            "'termnorm kg build' with several --lang"
        )
    return names


@dataclass
class ParallelBatch:
    """2P texts (P pivots, then their P translations) and each text's teacher row."""

    terms: list[str]  # [2P]
    teacher_rows: torch.Tensor  # [2P] index into ParallelNames.pivots

    @property
    def pairs(self) -> int:
        """P, the number of pairs."""
        return len(self.terms) // 2


class ParallelSampler:
    """Draws :class:`ParallelBatch` es of ``pairs`` pairs from ``names`` (module doc)."""

    def __init__(
        self, names: ParallelNames, pairs: int, seed: int = 0, lang_balanced: bool = False
    ) -> None:
        if pairs < 1:
            raise ValueError(f"a parallel batch needs at least one pair (got {pairs})")
        self.names, self.pairs, self.seed = names, pairs, seed
        self.lang_balanced = lang_balanced
        self.pool = names.with_translation  # [C'] concepts that have a translation
        langs = names.langs.astype(str)
        self.by_lang = [np.flatnonzero(langs == lang) for lang in np.unique(langs)]

    def batch(self, step: int, shard: int = 0) -> ParallelBatch:
        """The batch of ``(step, shard)``: deterministic given the seed."""
        rng = np.random.default_rng([self.seed, 23, step, shard])
        if self.lang_balanced:
            concepts, translations = self._balanced(rng)
        else:
            replace = self.pairs > len(self.pool)
            concepts = rng.choice(self.pool, size=self.pairs, replace=replace)
            translations = [self._translation(rng, int(c)) for c in concepts]
        pivots = [self.names.pivots[int(c)] for c in concepts]
        rows = torch.from_numpy(np.concatenate([concepts, concepts]).astype(np.int64))
        return ParallelBatch(terms=pivots + translations, teacher_rows=rows)

    def _balanced(self, rng: np.random.Generator) -> tuple[np.ndarray, list[str]]:
        """P pairs by language first: a language uniformly, then one of its translations."""
        langs = rng.integers(len(self.by_lang), size=self.pairs)
        picks = np.array(
            [self.by_lang[lang][rng.integers(len(self.by_lang[lang]))] for lang in langs]
        )
        concepts = np.searchsorted(self.names.offsets, picks, side="right") - 1
        return concepts, [str(self.names.texts[i]) for i in picks]

    def _translation(self, rng: np.random.Generator, concept: int) -> str:
        """A language of the concept's translations uniformly, then one of its terms."""
        lo, hi = int(self.names.offsets[concept]), int(self.names.offsets[concept + 1])
        langs = self.names.langs[lo:hi]
        lang = rng.choice(np.unique(langs.astype(str)))
        pick = lo + int(rng.choice(np.flatnonzero(langs == lang)))
        return str(self.names.texts[pick])

    def before_step(self, step: int, encode: Callable[[list[str]], np.ndarray]) -> None:
        """Nothing: the pairs do not follow the model."""

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint needs to reproduce the batch stream."""
        return {"seed": self.seed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.seed = int(state["seed"])

    def stats(self) -> dict[str, int]:
        """The parallel names' counts (model card)."""
        return self.names.counts()
