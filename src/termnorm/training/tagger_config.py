"""Settings of ``termnorm ner train`` (import-free: the CLI reads the fields' help)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from termnorm.options import check_bounds, opt

__all__ = ["TaggerTrainConfig"]


@dataclass(frozen=True)
class TaggerTrainConfig:
    """How the span tagger is trained (each field's ``help`` is its CLI help, its bounds the
    CLI's and :meth:`__post_init__`'s)."""

    epochs: int = opt(3, "Passes over the training chunks.", min=1)
    batch_size: int = opt(16, "Chunks per optimisation step.", min=1)
    learning_rate: float = opt(5e-5, "AdamW rate of the encoder.", min=1e-12)
    head_learning_rate: float = opt(
        1e-3, "AdamW rate of the linear BIO head (starts random).", min=1e-12
    )
    weight_decay: float = opt(0.01, "AdamW weight decay.", min=0.0)
    warmup: float = opt(0.1, "Share of the steps with a linear warm-up, then linear decay.", min=0)
    max_length: int = opt(
        128, "Word pieces per chunk (capped at the model's); longer texts are cut.", min=8
    )
    stride: int = opt(32, "Word pieces shared by consecutive chunks.", min=0)
    dropout: float = opt(0.1, "Dropout before the head.", min=0)
    dev_fraction: float = opt(
        0.1,
        "Share of the training documents held out for early stopping when no --dev is "
        "given (0: none, train every epoch and keep the last).",
        min=0,
    )
    patience: int = opt(1, "Epochs without a better dev span F1 before stopping.", min=1)
    max_minutes: float | None = opt(
        None,
        "Wall-clock budget: stop after the step that passes it, score the dev documents "
        "and keep the best weights so far (default: no budget).",
        min=1e-9,
    )
    kg_copies: int = opt(
        3,
        "With --kg: copies of each labelled text whose spans are replaced by other KG names.",
        min=0,
    )
    excluded_types: tuple[str, ...] = opt(
        (),
        'With --kg: leave out the names of concepts of this semantic type ("Disease"); repeatable.',
        flag="--not-type",
    )
    seed: int = opt(0, "Seed of the split, the head and the order.")
    threads: int | None = opt(
        None, "Torch intra-op threads while training (default: torch's).", min=1
    )

    def __post_init__(self) -> None:
        check_bounds(self, label=lambda name: name)
        for name in ("warmup", "dropout", "dev_fraction"):  # shares in [0, 1)
            if getattr(self, name) >= 1:
                raise ValueError(f"{name} must be below 1, got {getattr(self, name)}")
        if self.stride >= self.max_length - 2:
            raise ValueError(f"stride must be in [0, max_length - 2), got {self.stride}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a flat JSON-ready dict (the card's ``training`` entry)."""
        return asdict(self)
