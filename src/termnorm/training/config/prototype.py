"""Settings of the prototype batches (:mod:`termnorm.training.prototype`, ``--batches
prototype``): prototypes, positives and faiss negatives per batch, corpus contexts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from termnorm.training.config.base import Section, opt
from termnorm.training.config.shared import PROTOTYPE_LOSSES, BatchKind, SharedConfig

__all__ = ["PrototypeConfig"]


@dataclass
class PrototypeConfig(Section):
    """P prototypes × (k positives + m negatives) per batch, from KG terms and contexts."""

    name: ClassVar[str] = "prototype"

    prototypes: int = opt(4, "--batches prototype: prototypes P per batch.", min=1)
    prototype_positives: int = opt(20, "--batches prototype: positives k per prototype.", min=1)
    prototype_negatives: int = opt(
        30, "--batches prototype: possibly-hard negatives m per prototype.", min=0
    )
    prototypes_per_concept: int = opt(
        3, "--batches prototype: prototypes per concept (a new synonym each first).", min=1
    )
    prototype_refresh: int = opt(
        0,
        "--batches prototype: rebuild the negatives' index every N steps (0 = every "
        "epoch; searches at most --hard-max-concepts prototypes).",
        min=0,
    )
    context_words: int = opt(
        8, "Words on each side of a contextual mention's [M_s] ... [M_e].", min=0
    )
    contexts_per_term: int = opt(
        4, "Contextual mentions kept per KG surface form (the paper's 4).", min=1
    )

    def validate(self, run: SharedConfig) -> None:
        """The bounds; prototype batches serve the MS losses, and their contexts must fit."""
        self.check_bounds()
        prototype = run.batches is BatchKind.PROTOTYPE
        if prototype and run.loss not in PROTOTYPE_LOSSES:
            raise ValueError(
                f"--batches prototype serves --loss {', '.join(PROTOTYPE_LOSSES)} (got "
                f"{run.loss}); pass one of them or --batches kg"
            )
        if prototype and run.corpus and run.max_length < 4 * self.context_words:
            raise ValueError(
                f"contextual mentions of --context-words {self.context_words} need --max-length "
                f">= {4 * self.context_words} tokens (the window and the markers); raise "
                "--max-length or lower --context-words"
            )
