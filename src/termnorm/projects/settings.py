"""A project's settings as plain data: how its rows are mapped (the pipeline spec a
``normalize`` run takes, and the candidates kept per row) and where its rows came from
(file, hash, columns).

Both are frozen dataclasses stored as JSON in the project row; reading refuses unknown keys,
so a database written by a newer termnorm is never half understood.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from termnorm.io.decoding import DecodeErrors
from termnorm.options import options_from_dict, options_to_dict
from termnorm.search.spec import PipelineSpec

if TYPE_CHECKING:
    from termnorm.projects.models import ProjectRow
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


@dataclass(frozen=True)
class PipelineSettings:
    """How a project's rows are mapped: ``spec``, the search, built by
    :func:`termnorm.search.build.build` as for ``termnorm normalize`` (every setting that
    decides the search; the project's approved mappings are added as domain synonyms), and
    ``k``, the candidates kept per row (the project's own setting)."""

    spec: PipelineSpec = field(default_factory=PipelineSpec)
    k: int = DEFAULT_K

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        check_min_score(self.spec.min_score)

    @classmethod
    def of(cls, k: int = DEFAULT_K, **spec: Any) -> PipelineSettings:
        """Settings of ``k`` and the spec's fields, every path made absolute (a project
        outlives the working folder)."""
        return cls(PipelineSpec(**spec).resolved(), k)

    @property
    def calibrated(self) -> bool:
        """Whether scores are probabilities of being correct (a learned combiner)."""
        return self.spec.combiner is not None

    def to_row(self) -> dict[str, dict[str, Any]]:
        """The project row's JSON columns: ``spec`` (``PipelineSpec.to_dict``) and
        ``settings`` (the project's own: ``k``)."""
        return {"spec": self.spec.to_dict(), "settings": {"k": self.k}}

    @classmethod
    def from_row(cls, row: ProjectRow) -> PipelineSettings:
        """The settings stored by :meth:`to_row`; unknown keys are refused."""
        spec = PipelineSpec.from_dict(row.spec, "a project's pipeline spec (a newer termnorm's?)")
        unknown = sorted(set(row.settings) - {"k"})
        if unknown:
            raise ValueError(
                f"unknown project setting(s) {', '.join(unknown)} (a newer termnorm's?); known: k"
            )
        return cls(spec, **row.settings)


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


MatcherBuilder = Callable[[PipelineSpec, Sequence[tuple[str, str]]], "RowMatcher"]
"""``build(spec, synonyms) -> matcher``: the search of a project's spec, with
``(concept_id, text)`` pairs added as domain synonyms (:func:`termnorm.api.project_matcher`)."""
