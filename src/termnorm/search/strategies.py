"""Search modules O-T, O-C, D-T, D-C, OD-T, OD-C and the parsing of strategy names.

A *module* (Xu & Bethard 2021, table 1) is a search target (O ontology synonyms, D domain
synonyms, OD both; see :mod:`termnorm.search.domain`) and a representation (T: every text its
own vector, eq. 7; C: one mean vector per concept, eq. 8). A *strategy* is a module or a sieve
``first+second`` of two modules (:mod:`termnorm.search.sieve`). Names are case-insensitive and
written ``o-t``, ``od-c``, ``d-t+od-t``; :data:`PAPER_STRATEGIES` lists the paper's 14 in the
order of its table 4 (6 modules, then the 8 sieves of its table 2).

Every module is a :class:`~termnorm.search.candidate.Matcher`, so evaluators, the CLI and the
API use it like the plain normalizer. Similarity is the cosine (vectors are L2-normalised).

Ties (a text shared by several concepts gives them the same score) follow
:func:`~termnorm.search.candidate.rank_key`: the concept matched at its own name first, then
the smaller concept ID, so the same concept always comes first (the paper picks one at
random). A concept appears once in a ranking, at its best text; between equally scored texts
of one concept the ontology text wins over the domain one, then the earlier row.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from termnorm.index.exact import exact_search
from termnorm.search.candidate import TIE_DECIMALS, Candidate, is_name, rank_key
from termnorm.search.domain import SearchSpace, Target
from termnorm.search.normalizer import RowResult
from termnorm.search.query import DEFAULT_MAX_CHARS, QueryError, query_problem

__all__ = [
    "MODULES",
    "PAPER_SIEVES",
    "PAPER_STRATEGIES",
    "TIE_DECIMALS",
    "ModuleSpec",
    "Representation",
    "SearchModule",
    "StrategySpec",
    "VectorMatcher",
    "parse_strategy",
    "rank_candidates",
]

_HELP = "expected MODULE or FIRST+SECOND with MODULE = o-t, o-c, d-t, d-c, od-t or od-c"


class Representation(str, Enum):
    """How a target is represented: each text (T) or each concept's mean vector (C)."""

    T = "t"
    C = "c"


@dataclass(frozen=True)
class ModuleSpec:
    """A search module: target × representation."""

    target: Target
    representation: Representation

    def __str__(self) -> str:
        return f"{self.target.value}-{self.representation.value}"


@dataclass(frozen=True)
class StrategySpec:
    """One module, or a sieve: ``first``, then ``second`` when ``first`` is not confident."""

    first: ModuleSpec
    second: ModuleSpec | None = None

    @property
    def is_sieve(self) -> bool:
        """Whether this is a two-module sieve."""
        return self.second is not None

    @property
    def needs_domain(self) -> bool:
        """Whether any module searches domain synonyms (D or OD)."""
        mods = [self.first] + ([self.second] if self.second else [])
        return any(m.target is not Target.O for m in mods)

    def __str__(self) -> str:
        return f"{self.first}+{self.second}" if self.second else str(self.first)


def _parse_module(part: str, whole: str) -> ModuleSpec:
    target, sep, rep = part.rpartition("-")
    try:
        if not sep:
            raise ValueError
        return ModuleSpec(Target(target), Representation(rep))
    except ValueError:
        raise ValueError(f"unknown search module {part!r} in strategy {whole!r}: {_HELP}") from None


def parse_strategy(text: str | StrategySpec) -> StrategySpec:
    """``"o-t"`` → O-T; ``"D-T + OD-T"`` → sieve D-T then OD-T. Bad names raise ``ValueError``."""
    if isinstance(text, StrategySpec):
        return text
    whole = "".join(str(text).split()).lower()
    if not whole:
        raise ValueError(f"empty search strategy: {_HELP}")
    parts = whole.split("+")
    if len(parts) > 2:
        raise ValueError(
            f"a sieve has two modules (first+second), got {len(parts)} in {text!r}: {_HELP}"
        )
    modules = [_parse_module(p, str(text)) for p in parts]
    if len(modules) == 2 and modules[0] == modules[1]:
        raise ValueError(f"sieve {text!r} uses the same module twice: {_HELP}")
    return StrategySpec(modules[0], modules[1] if len(modules) == 2 else None)


MODULES: tuple[StrategySpec, ...] = tuple(
    parse_strategy(s) for s in ("o-t", "o-c", "d-t", "d-c", "od-t", "od-c")
)
PAPER_SIEVES: tuple[StrategySpec, ...] = tuple(
    parse_strategy(f"{first}+{second}")
    for second_target in ("o", "od")
    for first in ("d-t", "d-c")
    for second in (f"{second_target}-t", f"{second_target}-c")
)
PAPER_STRATEGIES: tuple[StrategySpec, ...] = MODULES + PAPER_SIEVES


def rank_candidates(
    best: Mapping[str, tuple[float, str]], names: Mapping[str, str], k: int
) -> list[Candidate]:
    """``concept_id -> (score, matched text)`` → top-``k`` candidates, ties by :func:`rank_key`."""

    def key(cid: str) -> tuple[float, bool, str]:
        score, text = best[cid]
        return rank_key(score, is_name(text, names.get(cid, "")), cid)

    order = sorted(best, key=key)[:k]
    return [
        Candidate(cid, names.get(cid, cid), float(best[cid][0]), best[cid][1], rank)
        for rank, cid in enumerate(order, start=1)
    ]


class VectorMatcher(ABC):
    """A matcher over a :class:`SearchSpace`: validate and encode the queries once, then
    search vectors. Queries are checked as the plain normalizer checks them
    (:mod:`termnorm.search.query`)."""

    name: str
    max_chars: int = DEFAULT_MAX_CHARS

    def __init__(self, space: SearchSpace) -> None:
        self.space = space

    @abstractmethod
    def search_vectors(self, queries: np.ndarray, k: int) -> list[list[Candidate]]:
        """Top-``k`` distinct concepts for each query vector ``[q, d]``."""

    def normalize_rows(
        self, texts: Sequence[object], k: int = 5, show_progress: bool = False
    ) -> list[RowResult]:
        """One :class:`RowResult` per input, in order; bad inputs carry their message."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        problems = [query_problem(t, self.max_chars) for t in texts]
        rows = [i for i, p in enumerate(problems) if p is None]
        out = [RowResult([], p) for p in problems]
        if rows:
            queries = [str(texts[i]).strip() for i in rows]
            ranked = self.search_vectors(self.space.encode_queries(queries), k)
            for row, candidates in zip(rows, ranked, strict=True):
                out[row] = RowResult(candidates)
        return out

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """Top-``k`` concepts per text (the :class:`~termnorm.search.Matcher` protocol);
        :class:`~termnorm.search.QueryError` naming the first bad row."""
        results = self.normalize_rows(texts, k)
        for row, result in enumerate(results):
            if result.error is not None:
                raise QueryError(result.error, row=row)
        return [r.candidates for r in results]

    def normalize(self, text: str, k: int = 5) -> list[Candidate]:
        """Top-``k`` concepts for one text."""
        return self.normalize_batch([text], k)[0]

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        """Other IDs of a concept, from the index."""
        return tuple(self.space.alt_ids.get(concept_id, ()))


class SearchModule(VectorMatcher):
    """One of the six modules; see the module docstring for ranking and ties."""

    def __init__(self, space: SearchSpace, spec: ModuleSpec) -> None:
        super().__init__(space)
        space.require(spec.target)
        self.spec = spec
        self.name = str(spec)

    def search_vectors(self, queries: np.ndarray, k: int) -> list[list[Candidate]]:
        if self.spec.representation is Representation.C:
            return self._search_concepts(queries, k)
        return self._search_texts(queries, k)

    def _search_concepts(self, queries: np.ndarray, k: int) -> list[list[Candidate]]:
        ids, matrix = self.space.concept_rows(self.spec.target)
        fetch = min(len(ids), k + 8)  # a few extra rows so near-ties at the k-th are ordered
        res = exact_search(matrix, queries, fetch)
        out = []
        for scores, rows in zip(res.scores, res.ids, strict=True):
            best = {
                ids[r]: (float(s), self.space.names.get(ids[r], ids[r]))
                for s, r in zip(scores, rows, strict=True)
                if r >= 0
            }
            out.append(rank_candidates(best, self.space.names, k))
        return out

    def _search_texts(self, queries: np.ndarray, k: int) -> list[list[Candidate]]:
        parts = self.space.text_rows(self.spec.target)
        total = sum(len(p) for p in parts)
        out: list[list[Candidate]] = [[] for _ in range(len(queries))]
        todo = np.arange(len(queries))
        fetch = min(total, max(4 * k, k + 16))
        while len(todo):
            best: list[dict[str, tuple[float, str]]] = [{} for _ in todo]
            for part in parts:
                res = exact_search(part.vectors, queries[todo], min(fetch, max(1, len(part))))
                for qi, (scores, rows) in enumerate(zip(res.scores, res.ids, strict=True)):
                    seen = best[qi]
                    for s, r in zip(scores, rows, strict=True):
                        cid = part.concept_ids[r] if r >= 0 else None
                        # first seen wins on equal score: O before D, then the smaller row
                        if cid is not None and (cid not in seen or s > seen[cid][0]):
                            seen[cid] = (float(s), part.texts[r])
            again = []
            for qi, q in enumerate(todo):
                if len(best[qi]) < k and fetch < total:
                    again.append(q)
                else:
                    out[q] = rank_candidates(best[qi], self.space.names, k)
            todo, fetch = np.asarray(again, dtype=np.int64), min(total, fetch * 4)
        return out
