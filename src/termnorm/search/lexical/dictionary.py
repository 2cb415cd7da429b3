"""The term dictionary behind the lexical baselines, and the concept ranking they share.

A :class:`TermDictionary` lists a KG's terms grouped by concept: concepts in ``concept_id``
order, each concept's preferred terms first, then its other terms in table order. Text is
compared after :func:`normalize_text` (Unicode NFKC, case-folded, every run of punctuation,
symbols or spaces turned into one space).

A lexical matcher scores query × term; a concept's score is the best score of its terms
(``s(q, c) = max_{t ∈ terms(c)} s(q, t)``) and the concept appears once, at that term.
Concepts with score ≤ 0 are never returned. Within a concept the best term is its first
best-scoring one (preferred names first). Ties between concepts go first to the concept
matched at a preferred name (an exact-match query "aniridia" equals the preferred name of
MeSH D015783 and a synonym of OMIM 106210: D015783 first), then to the smaller
``concept_id``, the rule of the embedding matchers
(:func:`~termnorm.search.candidate.rank_key`), so results are deterministic.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from termnorm.errors import EmptyResultError
from termnorm.kg.graph import KnowledgeGraph
from termnorm.search.candidate import Candidate

__all__ = ["TermDictionary", "normalize_text"]

_NON_WORD = re.compile(r"[\W_]+")


def normalize_text(text: str) -> str:
    """``"Breast-Cancer , (BRCA1)"`` → ``"breast cancer brca1"``."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@dataclass
class TermDictionary:
    """A KG's terms grouped by concept (see module doc); built with :meth:`from_kg`.

    ``starts[c]`` is the index of concept ``c``'s first term; ``term_concept[t]`` the concept
    of term ``t``; terms whose normalized text is empty are left out.
    """

    concept_ids: list[str]
    names: list[str]
    alt_ids: dict[str, tuple[str, ...]]
    terms: list[str]
    norm_terms: list[str]
    preferred: np.ndarray  # bool [T]
    term_concept: np.ndarray  # int64 [T]
    starts: np.ndarray  # int64 [C]

    @classmethod
    def from_kg(cls, kg: KnowledgeGraph) -> TermDictionary:
        """Group ``kg.terms`` by concept; concepts without a usable term are left out."""
        terms = kg.terms.assign(
            norm=[normalize_text(str(t)) for t in kg.terms["term"]],
            order=np.arange(len(kg.terms)),
        )
        terms = terms[terms["norm"] != ""]
        terms = terms.sort_values(
            ["concept_id", "is_preferred", "order"], ascending=[True, False, True], kind="stable"
        )
        if terms.empty:
            raise EmptyResultError("the KG has no term to match against")
        concept_ids = list(dict.fromkeys(terms["concept_id"]))
        index = {cid: i for i, cid in enumerate(concept_ids)}
        term_concept = np.fromiter((index[c] for c in terms["concept_id"]), np.int64, len(terms))
        names = kg.concept_names()
        alt = dict(zip(kg.concepts["concept_id"], kg.concepts["alt_ids"], strict=True))
        return cls(
            concept_ids=concept_ids,
            names=[str(names.get(c, "")) for c in concept_ids],
            alt_ids={c: _ids(alt[c]) for c in concept_ids if c in alt and _ids(alt[c])},
            terms=[str(t) for t in terms["term"]],
            norm_terms=list(terms["norm"]),
            preferred=terms["is_preferred"].to_numpy(dtype=bool),
            term_concept=term_concept,
            starts=np.flatnonzero(np.r_[True, term_concept[1:] != term_concept[:-1]]),
        )

    def __len__(self) -> int:
        """Number of terms."""
        return len(self.terms)

    def candidate(self, concept: int, term: int, score: float, rank: int) -> Candidate:
        """The :class:`Candidate` for concept index ``concept`` matched at term ``term``."""
        return Candidate(
            self.concept_ids[concept], self.names[concept], score, self.terms[term], rank
        )

    def rank(self, term_scores: np.ndarray, k: int) -> list[list[Candidate]]:
        """Top-``k`` concepts per row of a query × term score block ``[B, T]``."""
        concept_scores = np.maximum.reduceat(term_scores, self.starts, axis=1)  # [B, C]
        return [
            self._rank_row(ts, cs, k) for ts, cs in zip(term_scores, concept_scores, strict=True)
        ]

    def _rank_row(self, term_row: np.ndarray, concept_row: np.ndarray, k: int) -> list[Candidate]:
        pos = np.flatnonzero(concept_row > 0)
        if len(pos) > k:  # keep the k best and everything tied with the k-th
            kth = np.partition(concept_row[pos], len(pos) - k)[len(pos) - k]
            pos = pos[concept_row[pos] >= kth]
        scores = concept_row[pos]
        best = np.array([self.best_term(term_row, int(c)) for c in pos], dtype=np.int64)
        # score descending, then matched at a preferred name, then concept_id
        order = np.lexsort((pos, ~self.preferred[best], -scores))[:k]
        return [
            self.candidate(int(pos[i]), int(best[i]), float(scores[i]), rank)
            for rank, i in enumerate(order, start=1)
        ]

    def best_term(self, term_row: np.ndarray, concept: int) -> int:
        """Index of concept ``concept``'s best-scoring term (the first one on ties)."""
        start = int(self.starts[concept])
        end = int(self.starts[concept + 1]) if concept + 1 < len(self.starts) else len(self.terms)
        return start + int(np.argmax(term_row[start:end]))


def _ids(value: object) -> tuple[str, ...]:
    """An ``alt_ids`` cell as a tuple (a missing cell, NaN in pandas, is empty)."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        return ()
    return tuple(str(v) for v in value)


class LexicalMatcherBase:
    """Shared :class:`~termnorm.search.Matcher` plumbing: name, dictionary and ``alt_ids``."""

    name = "lexical"

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.dictionary = TermDictionary.from_kg(kg)

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        """Alternative IDs of ``concept_id`` from the KG's ``alt_ids`` column."""
        return self.dictionary.alt_ids.get(concept_id, ())
