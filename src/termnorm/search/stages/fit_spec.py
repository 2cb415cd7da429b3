"""The training data and recall every learned stage is fitted on (hybrid weight, combiner,
ranker), in a module that imports neither torch nor the search code: the CLI generates the
``termnorm rank`` commands' options from its fields while it registers them.

The recall is the :class:`~termnorm.search.spec.PipelineSpec` that :class:`TrainingDataSpec`
extends: a stage is fitted on the candidates that ``build(spec)`` recalls before it at
inference (:func:`termnorm.search.build.fit_recall`), so a new spec field reaches the fits
with no other edit.
"""

# option() returns a dataclasses.Field, as field() does: no shared mutable default
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from termnorm.mentions.abbreviations import AbbreviationMode
from termnorm.mentions.mention import MentionFormat
from termnorm.search.defaults import resolve_strategy
from termnorm.search.spec import PipelineSpec, option

__all__ = ["DEFAULT_FOLDS", "RANKER_SETTINGS", "SYNONYMS_HELP", "TrainingDataSpec"]

DEFAULT_FOLDS = 5
RANKER_SETTINGS = ("ranker", "rank_mode", "fusion_weight", "theta", "multi", "implication")
"""The spec fields of the ranker stage at inference: no fit before the ranker reads them."""
SYNONYMS_HELP = (
    "Domain synonym file searched as at inference (a --mentions file too: cross-fitted by "
    "document); repeatable."
)


@dataclass(frozen=True)
class TrainingDataSpec(PipelineSpec):
    """The recall (the pipeline spec's fields) and the training data of a learned stage;
    paths as the user gave them. Each field's metadata is its command-line option.

    ``abbreviations``: default ab3p for formats that carry their documents. ``max_queries``:
    a seeded sample of that many queries (all when ``None``).
    """

    mentions: tuple[Path, ...] = option(
        (), "Annotated training mentions; repeatable.", exists="path"
    )
    mention_format: MentionFormat | None = option(
        None, "Mention format (detected when omitted).", flag="--format"
    )
    synonyms_format: str | None = option(
        None, "Format of the synonym files (detected when omitted)."
    )
    folds: int = option(DEFAULT_FOLDS, "Cross-fitting folds (documents).", min=2)
    abbreviations: AbbreviationMode | None = option(
        None, "Expand short forms from the documents (default: ab3p for document formats)."
    )
    max_queries: int | None = option(None, "Train on a seeded sample of this many queries.", min=1)
    seed: int = option(0, "Seed of the folds, the sampling and the ranker's training.")

    @property
    def resolved_strategy(self) -> str:
        """The strategy searched (:func:`~termnorm.search.defaults.resolve_strategy`)."""
        return resolve_strategy(self)
