"""``--ner DIR`` and ``--detectors dictionary|tagger|both``: the options ``annotate`` and
``eval annotate`` share, and the detectors they choose
(:func:`termnorm.annotate.detectors.select_detectors`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from termnorm.annotate.detectors import DetectorChoice

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.annotate.spans import Detector
    from termnorm.search.spec import PipelineSpec

__all__ = ["DetectorChoice", "chosen_detectors", "detectors_option", "ner_option"]


def ner_option() -> Any:
    """``--ner DIR``: a span tagger folder."""
    return typer.Option(
        None,
        "--ner",
        help="Span tagger folder (termnorm ner train) that finds mentions too.",
    )


def detectors_option() -> Any:
    """``--detectors``: which detectors run."""
    return typer.Option(
        None,
        "--detectors",
        help="dictionary, tagger or both (default: the tagger with --ner, else the dictionary).",
    )


def chosen_detectors(
    spec: PipelineSpec, ner: Path | None, choice: DetectorChoice | None
) -> list[Detector]:
    """The detectors of the options; a tagger choice without ``--ner`` is a usage error."""
    from termnorm.annotate.detectors import select_detectors

    try:
        return select_detectors(choice, ner, spec)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--detectors") from None
