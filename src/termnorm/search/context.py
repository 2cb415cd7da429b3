"""The mention in its document: search a mention and its abbreviation-expanded text, keep one.

A mention whose document defines its short form ("bipolar affective disorder (BPAD)" …
"BPAD") is expanded through the document's pairs (:mod:`termnorm.mentions.abbreviations`).
The expansion is not always the better query: domain synonyms may hold the short form
itself ("DM" annotated as a training mention). :class:`ContextMatcher` searches both texts
with the matcher it wraps (one ``normalize_rows`` call for all distinct texts) and keeps,
per mention, the ranking :class:`ExpansionRule` chooses: ``expanded`` always;
``best`` (the default: no threshold to tune) the one whose top candidate scores higher;
``original-first`` the original's when its top score reaches ``threshold``, else the
expanded one's (a sieve).

A tie (equal top scores to :data:`~termnorm.search.candidate.TIE_DECIMALS` decimals) goes to
the document's definition under every rule: "CD" may name Celiac Disease in the dictionary,
but the document's "Crohn disease (CD)" says what its author meant. Rankings are compared on
the recall stage's scores (:func:`recall_top`), so a ranker never turns that choice around.
The measured effect of each rule is in ``docs/results/abbreviations.md``.

A mention nothing expanded is searched once. Candidates of a ranking taken from the expanded
text carry ``expanded_from`` (the original text); ``error``/``abstained`` follow the chosen
ranking. Rankings are never merged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from termnorm.mentions.abbreviations import (
    AbbreviationMode,
    DocumentAbbreviations,
    Expansion,
    parse_abbreviation_mode,
)
from termnorm.mentions.documents import DOCUMENT_FORMATS, read_documents
from termnorm.search.candidate import TIE_DECIMALS, Candidate, RowMatcher, RowResult
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD

if TYPE_CHECKING:
    from termnorm.mentions import Mention

__all__ = [
    "DEFAULT_EXPANSION_RULE",
    "DEFAULT_EXPANSION_THRESHOLD",
    "ContextMatcher",
    "ContextRows",
    "ExpansionChoice",
    "ExpansionRule",
    "expand_in_documents",
    "file_expansions",
    "parse_expansion_rule",
    "recall_top",
]


class ExpansionRule(str, Enum):
    """Which of a mention's two rankings (original, expanded) to keep; see the module doc."""

    EXPANDED = "expanded"
    BEST = "best"
    ORIGINAL_FIRST = "original-first"


DEFAULT_EXPANSION_RULE = ExpansionRule.BEST
DEFAULT_EXPANSION_THRESHOLD = DEFAULT_SIEVE_THRESHOLD
"""``original-first`` keeps the original ranking when its top score reaches this."""


def parse_expansion_rule(value: ExpansionRule | str) -> ExpansionRule:
    """``value`` as an :class:`ExpansionRule`; an unknown name lists the known ones."""
    try:
        return ExpansionRule(value)
    except ValueError:
        known = ", ".join(r.value for r in ExpansionRule)
        raise ValueError(f"unknown expansion rule {value!r}; known rules: {known}") from None


def recall_top(candidates: Sequence[Candidate]) -> float | None:
    """The recall stage's best score among ``candidates``, rounded to
    :data:`~termnorm.search.candidate.TIE_DECIMALS` decimals (``None`` for no candidate): the
    ``score`` of recalled candidates, the ``recall_score`` of those a ranker reordered
    (``ranker_score`` set), so a learned score never decides between two rankings. For a
    ranked list this is the recall top's score whenever it is among the candidates: always
    when it was an exact match (the ranker keeps it first) or when ``k >= k_c``."""
    if not candidates:
        return None
    best = max(
        c.recall_score if c.ranker_score is not None and c.recall_score is not None else c.score
        for c in candidates
    )
    return round(best, TIE_DECIMALS)


@dataclass(frozen=True)
class ExpansionChoice:
    """An :class:`ExpansionRule` with its ``threshold`` (used by ``original-first`` only)."""

    rule: ExpansionRule = DEFAULT_EXPANSION_RULE
    threshold: float = DEFAULT_EXPANSION_THRESHOLD

    def __post_init__(self) -> None:
        object.__setattr__(self, "rule", parse_expansion_rule(self.rule))

    def prefers_expanded(
        self, original: Sequence[Candidate], expanded: Sequence[Candidate]
    ) -> bool:
        """Whether the rule keeps the ``expanded`` text's ranking rather than the ``original``'s.

        An empty ranking (refused or abstained) loses to one with candidates; when both are
        empty, the original is kept. Equal top scores keep the expanded ranking: the
        document's own definition of its short form wins a tie with the dictionary, and it
        always wins over a shorthand list's sense (an original ranking whose top candidate
        carries ``expansion_source``).
        """
        top_o, top_e = recall_top(original), recall_top(expanded)
        if top_e is None:
            return False
        if original and original[0].expansion_source is not None:
            return True  # a shorthand list's sense: the document's own definition wins
        if self.rule is ExpansionRule.EXPANDED or top_o is None or top_e == top_o:
            return True
        if self.rule is ExpansionRule.BEST:
            return top_e > top_o
        return top_o < round(self.threshold, TIE_DECIMALS)

    def keep(
        self, original: Sequence[Candidate], expanded: Sequence[Candidate], original_text: str
    ) -> list[Candidate] | None:
        """The expanded ranking, each candidate's ``expanded_from`` set to ``original_text``,
        when the rule prefers it; ``None`` when the original ranking is kept."""
        if not self.prefers_expanded(original, expanded):
            return None
        return [c._replace(expanded_from=original_text) for c in expanded]


class ContextRows(NamedTuple):
    """Rows answered in their documents' context: ``results[i]`` is row ``i``'s answer and
    ``unread[i]`` why its document's abbreviations could not be read (the row was then
    answered as written), else ``None``."""

    results: list[RowResult]
    unread: list[str | None]


def expand_in_documents(
    texts: Sequence[str],
    contexts: Sequence[str | None],
    mode: AbbreviationMode | str = AbbreviationMode.AB3P,
) -> tuple[list[Expansion], list[str | None]]:
    """Each text expanded through the abbreviations its own context (document text) defines,
    and per text why its document's abbreviations could not be read (``None``: read).

    ``contexts[i]`` is the document of ``texts[i]``; ``None`` or blank: no expansion. Each
    distinct document is analysed once. Mode ``none`` expands nothing. A document Ab3P fails
    on (:class:`~termnorm.mentions.abbreviations.AbbreviationError`) expands none of its texts.
    """
    if len(texts) != len(contexts):
        raise ValueError(f"{len(texts)} texts but {len(contexts)} contexts: give one per text")
    documents: Mapping[str, str] = {c: c for c in contexts if c is not None and c.strip()}
    if parse_abbreviation_mode(mode) is AbbreviationMode.NONE or not documents:
        return [Expansion(t, None) for t in texts], [None] * len(texts)
    abbreviations = DocumentAbbreviations(documents, mode)
    expansions = [
        abbreviations.expand(t, c) if c is not None and c.strip() else Expansion(t, None)
        for t, c in zip(texts, contexts, strict=True)
    ]
    unread = [abbreviations.unread(c) if c is not None else None for c in contexts]
    return expansions, unread


def file_expansions(
    path: Path, fmt: str, mentions: list[Mention], mode: AbbreviationMode | None
) -> tuple[AbbreviationMode, list[Expansion] | None]:
    """The abbreviation mode used for the mentions of ``path`` (default: ab3p when ``fmt``
    carries document text, else none) and each mention's expansion through its document
    (``None`` in mode none)."""
    if mode is None:
        mode = AbbreviationMode.AB3P if fmt in DOCUMENT_FORMATS else AbbreviationMode.NONE
    if mode is AbbreviationMode.NONE:
        return mode, None
    documents = DocumentAbbreviations(read_documents(path, fmt), mode)
    return mode, documents.expand_mentions(mentions)


class ContextMatcher:
    """A :class:`~termnorm.search.candidate.RowMatcher` that also answers expanded mentions.

    ``matcher`` does the searching (any row matcher, e.g. a strategy or a sieve);
    ``choice`` chooses between a mention's two rankings (module doc). As a plain matcher
    (``normalize_rows``, ``normalize_batch``) it is ``matcher`` itself;
    :meth:`normalize_expansions` is what uses the context.
    """

    def __init__(self, matcher: RowMatcher, choice: ExpansionChoice | None = None) -> None:
        self.matcher = matcher
        self.choice = choice or ExpansionChoice()
        self.name = matcher.name

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        """Other IDs of a concept, from the wrapped matcher."""
        return self.matcher.alt_ids(concept_id)

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """The wrapped matcher's answer (no context, no expansion)."""
        return self.matcher.normalize_batch(texts, k)

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """The wrapped matcher's answer (no context, no expansion)."""
        return self.matcher.normalize_rows(texts, k)

    def normalize_expansions(self, expansions: Sequence[Expansion], k: int = 5) -> list[RowResult]:
        """One :class:`RowResult` per expansion: the ranking the rule keeps (module doc).

        ``Expansion.expanded_from`` is the original text, ``Expansion.text`` the expanded one
        (``expanded_from is None``: nothing was expanded, the text is searched as is).
        """
        queries: dict[str, int] = {}
        for e in expansions:
            for text in (e.text, e.expanded_from):
                if text is not None:
                    queries.setdefault(text, len(queries))
        distinct = list(queries)
        rows = self.matcher.normalize_rows(distinct, k) if distinct else []
        out = []
        for e in expansions:
            result = rows[queries[e.text]]
            if e.expanded_from is not None:
                original = rows[queries[e.expanded_from]]
                kept = self.choice.keep(original.candidates, result.candidates, e.expanded_from)
                result = original if kept is None else result._replace(candidates=kept)
            out.append(result)
        return out

    def normalize_in_context(
        self,
        texts: Sequence[object],
        contexts: Sequence[object],
        k: int = 5,
        mode: AbbreviationMode | str = AbbreviationMode.AB3P,
    ) -> list[RowResult]:
        """The ``results`` of :meth:`answer_in_context`."""
        return self.answer_in_context(texts, contexts, k, mode).results

    def answer_in_context(
        self,
        texts: Sequence[object],
        contexts: Sequence[object],
        k: int = 5,
        mode: AbbreviationMode | str = AbbreviationMode.AB3P,
    ) -> ContextRows:
        """:meth:`normalize_expansions` of :func:`expand_in_documents`: ``contexts[i]`` is the
        document of ``texts[i]`` (not a string, or blank: no expansion). A text that is not a
        string gets the wrapped matcher's per-row error, as in ``normalize_rows``; a row whose
        document's abbreviations could not be read is answered as written, and its
        ``unread`` says why."""
        if len(texts) != len(contexts):
            raise ValueError(f"{len(texts)} texts but {len(contexts)} contexts: give one per text")
        usable = [i for i, t in enumerate(texts) if isinstance(t, str)]
        others = sorted(set(range(len(texts))) - set(usable))
        out: list[RowResult] = [RowResult([]) for _ in texts]
        unread: list[str | None] = [None] * len(texts)
        if others:
            refused = self.matcher.normalize_rows([texts[i] for i in others], k)
            for i, result in zip(others, refused, strict=True):
                out[i] = result
        if usable:
            expansions, why = expand_in_documents(
                [str(texts[i]) for i in usable],
                [c if isinstance(c := contexts[i], str) else None for i in usable],
                mode,
            )
            answers = self.normalize_expansions(expansions, k)
            for i, result, reason in zip(usable, answers, why, strict=True):
                out[i], unread[i] = result, reason
        return ContextRows(out, unread)
