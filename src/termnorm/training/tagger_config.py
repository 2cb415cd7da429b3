"""Settings of ``termnorm ner train`` (import-free: the CLI reads the fields' help)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["TaggerTrainConfig"]


def _help(text: str) -> dict[str, str]:
    return {"help": text}


@dataclass(frozen=True)
class TaggerTrainConfig:
    """How the span tagger is trained (each field's ``help`` is its CLI help)."""

    epochs: int = field(default=3, metadata=_help("Passes over the training chunks."))
    batch_size: int = field(default=16, metadata=_help("Chunks per optimisation step."))
    learning_rate: float = field(default=5e-5, metadata=_help("AdamW rate of the encoder."))
    head_learning_rate: float = field(
        default=1e-3, metadata=_help("AdamW rate of the linear BIO head (starts random).")
    )
    weight_decay: float = field(default=0.01, metadata=_help("AdamW weight decay."))
    warmup: float = field(
        default=0.1, metadata=_help("Share of the steps with a linear warm-up, then linear decay.")
    )
    max_length: int = field(
        default=128,
        metadata=_help("Word pieces per chunk (capped at the model's); longer texts are cut."),
    )
    stride: int = field(default=32, metadata=_help("Word pieces shared by consecutive chunks."))
    dropout: float = field(default=0.1, metadata=_help("Dropout before the head."))
    dev_fraction: float = field(
        default=0.1,
        metadata=_help(
            "Share of the training documents held out for early stopping when no --dev is "
            "given (0: none, train every epoch and keep the last)."
        ),
    )
    patience: int = field(
        default=1, metadata=_help("Epochs without a better dev span F1 before stopping.")
    )
    max_minutes: float | None = field(
        default=None,
        metadata=_help(
            "Wall-clock budget: stop after the step that passes it, score the dev documents "
            "and keep the best weights so far (default: no budget)."
        ),
    )
    seed: int = field(default=0, metadata=_help("Seed of the split, the head and the order."))
    threads: int | None = field(
        default=None, metadata=_help("Torch intra-op threads while training (default: torch's).")
    )

    def __post_init__(self) -> None:
        positive = ("epochs", "batch_size", "max_length", "patience")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0 <= self.stride < self.max_length - 2:
            raise ValueError(f"stride must be in [0, max_length - 2), got {self.stride}")
        if not 0 <= self.dev_fraction < 1:
            raise ValueError(f"dev_fraction must be in [0, 1), got {self.dev_fraction}")
        if not 0 <= self.warmup < 1 or not 0 <= self.dropout < 1:
            raise ValueError("warmup and dropout must be in [0, 1)")
        if self.learning_rate <= 0 or self.head_learning_rate <= 0:
            raise ValueError("learning rates must be positive")
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ValueError(f"max_minutes must be positive, got {self.max_minutes}")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be at least 1, got {self.threads}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a flat JSON-ready dict (the card's ``training`` entry)."""
        return asdict(self)
