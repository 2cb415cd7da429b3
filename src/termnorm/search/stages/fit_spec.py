"""The training data and recall every learned stage is fitted on (hybrid weight, combiner,
ranker), in a module that imports neither torch nor the search code: the CLI generates the
``termnorm rank`` commands' options from its fields while it registers them.
"""

# option() returns a dataclasses.Field, as field() does: no shared mutable default
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from termnorm.mentions.abbreviations import AbbreviationMode
from termnorm.mentions.mention import MentionFormat
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD, resolve_strategy
from termnorm.search.spec import SPEC_HELP, option

__all__ = ["DEFAULT_FOLDS", "TrainingDataSpec"]

DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class TrainingDataSpec:
    """The training data and recall of a learned stage; paths as the user gave them. Each
    field's metadata is its command-line option (help text, flag).

    ``strategy``: default ``d-t+od-t`` with synonyms, else ``o-t``. ``abbreviations``:
    default ab3p for formats that carry their documents. ``max_queries``: a seeded sample of
    that many queries (all when ``None``). ``threads``: encoder (and torch) threads.
    """

    index: Path = field(
        metadata={"help": "Index folder (recall).", "cli_required": True, "exists": "dir"}
    )
    mentions: tuple[Path, ...] = option(
        (), "Annotated training mentions; repeatable.", exists="path"
    )
    mention_format: MentionFormat | None = option(
        None, "Mention format (detected when omitted).", flag="--format"
    )
    synonyms: tuple[Path, ...] = option(
        (),
        "Domain synonym file searched as at inference (a --mentions file too: "
        "cross-fitted by document); repeatable.",
        exists="path",
    )
    synonyms_format: str | None = option(
        None, "Format of the synonym files (detected when omitted)."
    )
    strategy: str | None = option(
        None,
        "Search strategy, as termnorm normalize --strategy (default: d-t+od-t with "
        "synonyms, else o-t).",
    )
    threshold: float = option(
        DEFAULT_SIEVE_THRESHOLD,
        SPEC_HELP["sieve_threshold"],
        flag="--sieve-threshold",
        min=-1.0,
        max=1.0,
    )
    folds: int = option(DEFAULT_FOLDS, "Cross-fitting folds (documents).", min=2)
    abbreviations: AbbreviationMode | None = option(
        None, "Expand short forms from the documents (default: ab3p for document formats)."
    )
    max_queries: int | None = option(None, "Train on a seeded sample of this many queries.", min=1)
    seed: int = option(0, "Seed of the folds, the sampling and the ranker's training.")
    threads: int | None = option(
        None, "CPU threads of the encoder and torch (default: theirs).", min=1
    )

    @property
    def resolved_strategy(self) -> str:
        """The strategy searched (:func:`~termnorm.search.defaults.resolve_strategy`)."""
        return resolve_strategy(self)
