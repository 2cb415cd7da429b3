"""A project's settings as plain data: the pipeline that maps its rows (the settings a
``normalize`` run takes) and where its rows came from (file, hash, columns).

Both are frozen dataclasses stored as JSON in the project row; ``from_dict`` refuses unknown
keys, so a database written by a newer termnorm is never half understood.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.io.decoding import DecodeErrors
from termnorm.kg._options import options_from_dict, options_to_dict
from termnorm.search.spec import PipelineSpec

if TYPE_CHECKING:
    from termnorm.search.candidate import RowMatcher

__all__ = ["DEFAULT_K", "PipelineSettings", "ProjectSource", "check_min_score", "score_bounds"]

DEFAULT_K = 5
"""Candidates kept per row."""


def score_bounds() -> tuple[float, float]:
    """The range of a ``--min-score``: the bounds of ``termnorm normalize --min-score``
    (:class:`~termnorm.search.spec.PipelineSpec`'s ``min_score``), one range for every face."""
    (meta,) = (f.metadata for f in dataclasses.fields(PipelineSpec) if f.name == "min_score")
    return float(meta["min"]), float(meta["max"])


def check_min_score(value: float | None) -> float | None:
    """``value`` when it is ``None`` or in :func:`score_bounds`; a ``ValueError`` saying so
    otherwise (NaN included: it would compare false with every score)."""
    low, high = score_bounds()
    if value is not None and not (math.isfinite(value) and low <= value <= high):
        raise ValueError(
            f"--min-score {value:g}: a score threshold must be in [{low:g}, {high:g}] (scores "
            "are cosines, or probabilities with a --combiner); one outside would keep no "
            "candidate or every one"
        )
    return value


def _path(value: str | Path | None) -> str | None:
    return None if value is None else str(Path(value).resolve())


@dataclass(frozen=True)
class PipelineSettings:
    """How a project's rows are mapped: what ``termnorm normalize`` would be given.

    ``index``: an index folder (``None``: the default index). ``runtime``: the encoder's
    runtime. ``synonyms``: domain synonym files (the project's approved mappings are added
    to them). ``strategy``: ``None`` follows the CLI's rule (``d-t+od-t`` once there are
    domain synonyms, else ``o-t``), so approved mappings are searched as soon as they exist.
    ``ranker`` / ``hybrid`` / ``combiner``: learned stages (a combiner makes scores calibrated
    probabilities); ``k`` candidates are kept per row, ``k_c`` reranked; ``min_score``
    drops weaker candidates."""

    index: str | None = None
    runtime: str = "torch"
    synonyms: tuple[str, ...] = ()
    strategy: str | None = None
    ranker: str | None = None
    hybrid: str | None = None
    combiner: str | None = None
    k: int = DEFAULT_K
    k_c: int = 10
    min_score: float | None = None

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        check_min_score(self.min_score)
        if self.ranker is not None and self.combiner is not None:
            raise ValueError("a combiner card names its own ranker (if any): drop --ranker")

    @classmethod
    def of(
        cls,
        index: str | Path | None = None,
        synonyms: Sequence[str | Path] = (),
        ranker: str | Path | None = None,
        hybrid: str | Path | None = None,
        combiner: str | Path | None = None,
        **rest: Any,
    ) -> PipelineSettings:
        """Settings with every path made absolute (a project outlives the working folder)."""
        return cls(
            index=_path(index), synonyms=tuple(str(Path(s).resolve()) for s in synonyms),
            ranker=_path(ranker), hybrid=_path(hybrid), combiner=_path(combiner), **rest,
        )  # fmt: skip

    @property
    def calibrated(self) -> bool:
        """Whether scores are probabilities of being correct (a learned combiner)."""
        return self.combiner is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what the project row stores)."""
        return options_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PipelineSettings:
        """The settings stored by :meth:`to_dict`; unknown keys are refused."""
        return options_from_dict(cls, data, "a project's pipeline settings (a newer termnorm's?)")


@dataclass(frozen=True)
class ProjectSource:
    """Where a project's rows came from: the file (absolute path), its SHA-256 when read,
    which columns hold the code, the text, the frequency and the context shown to reviewers,
    and how the file is decoded (``errors``: a :class:`~termnorm.io.decoding.DecodeErrors`)."""

    path: str
    sha256: str
    code_column: str
    text_column: str
    frequency_column: str | None = None
    context_columns: tuple[str, ...] = field(default_factory=tuple)
    encoding: str = "utf-8-sig"
    errors: str = DecodeErrors.STRICT.value

    @property
    def columns(self) -> list[str]:
        """Every column the project reads, code and text first."""
        optional = [self.frequency_column] if self.frequency_column else []
        return [self.code_column, self.text_column, *optional, *self.context_columns]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``errors`` only when not strict: older termnorms read the rest)."""
        data = options_to_dict(self)
        if self.errors == DecodeErrors.STRICT.value:
            del data["errors"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProjectSource:
        """The spec stored by :meth:`to_dict`; unknown keys are refused."""
        return options_from_dict(cls, data, "a project's source record (a newer termnorm's?)")


MatcherBuilder = Callable[["PipelineSettings", Sequence[tuple[str, str]]], "RowMatcher"]
"""``build(settings, synonyms) -> matcher``: the search a project's settings describe, with
``(concept_id, text)`` pairs added as domain synonyms."""
