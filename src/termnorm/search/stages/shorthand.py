"""Shorthand senses: search a query as written and through each sense of its shorthand.

"HTN" alone matches nothing a terminology lists and lands on a lookalike ("Knuckle pad").
The last stage of :data:`~termnorm.search.stages.STAGES`: a query whose tokens look like
shorthand (:mod:`termnorm.mentions.shorthand`) is searched as written and as each rewritten
query the list gives (one per sense: "AF" → "atrial fibrillation", "annulus fibrosus", ...),
with the matcher it wraps, in one ``normalize_rows`` call. The ranking whose recall-stage
top score is highest is kept (:func:`~termnorm.search.context.recall_top`, the comparison a
document's own abbreviations use); a tie keeps the text as written, which the terminology
itself matched as well as any sense. Candidates of a rewritten ranking carry
``expanded_from`` (the query), ``expansion`` (the text searched) and ``expansion_source``
(the list's name). The spec field ``shorthand`` names the list; ``"none"`` turns it off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from termnorm.mentions.shorthand import Shorthand, ShorthandList, expansions, shorthand_list
from termnorm.search.candidate import OverRecall, RowMatcher, RowResult
from termnorm.search.context import recall_top

if TYPE_CHECKING:
    from termnorm.search.domain import SearchSpace
    from termnorm.search.spec import PipelineSpec

__all__ = ["SHORTHAND_OFF", "ShorthandMatcher", "apply"]

SHORTHAND_OFF = "none"
"""The spec's ``shorthand`` value that expands no shorthand."""


class ShorthandMatcher(OverRecall):
    """``recall`` (any row matcher) answering each query through its shorthand senses too
    (module doc)."""

    def __init__(self, recall: RowMatcher, shorthand: ShorthandList) -> None:
        self.recall = recall
        self.shorthand = shorthand
        self.name = recall.name
        # the wrapped ranker's multi-code predictor, if any: a file gets its columns
        self.implication = getattr(recall, "implication", None)

    def identity(self) -> dict[str, Any]:
        """The wrapped matcher's identity and the shorthand list's name."""
        return {**super().identity(), "shorthand": self.shorthand.name}

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """One :class:`RowResult` per text: the ranking of the text as written or of the
        sense whose top recall score is highest (a tie keeps the text as written)."""
        rewrites = [expansions(t, self.shorthand) if isinstance(t, str) else [] for t in texts]
        extra = list(dict.fromkeys(r.text for rs in rewrites for r in rs))
        rows = self.recall.normalize_rows([*texts, *extra], k)
        at = {text: len(texts) + i for i, text in enumerate(extra)}
        out = []
        for text, result, senses in zip(texts, rows[: len(texts)], rewrites, strict=True):
            best, best_top = result, recall_top(result.candidates)
            for sense in senses if result.error is None else ():
                answer = rows[at[sense.text]]
                top = recall_top(answer.candidates)
                if top is not None and (best_top is None or top > best_top):
                    best, best_top = _marked(answer, str(text), sense), top
            out.append(best)
        return out


def _marked(result: RowResult, text: str, sense: Shorthand) -> RowResult:
    """``result`` (the ranking of ``sense``) with each candidate's provenance naming the
    query ``text``, the rewritten text and its list."""
    kept = [
        c._replace(expanded_from=text, expansion=sense.text, expansion_source=sense.source)
        for c in result.candidates
    ]
    return result._replace(candidates=kept)


def apply(spec: PipelineSpec, matcher: RowMatcher, space: SearchSpace, artifact: Any) -> RowMatcher:
    """``matcher`` followed by the shorthand list named ``artifact`` (``"none"``: ``matcher``
    itself); :class:`~termnorm.errors.UnknownNameError` lists the known lists."""
    if artifact == SHORTHAND_OFF:
        return matcher
    return ShorthandMatcher(matcher, shorthand_list(str(artifact)))
