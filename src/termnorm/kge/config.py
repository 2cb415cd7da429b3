"""Configuration of one KGE training job (``termnorm kge train``): a dataclass whose field help
the CLI reuses.

Defaults follow the paper where it says something (the split is its 90 % training, 6 % test,
4 % validation; embedding size 128 is ours). How each model trains (loss, regulariser,
initialisation, negatives per positive, learning rate) comes from its recipe in
:mod:`termnorm.kge.recipes`: ``lr`` and ``negatives`` left at ``None`` take the recipe's values.
Training runs up to ``epochs`` epochs and stops early when the filtered MRR on (a seeded sample
of) the validation split stops improving.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any

__all__ = ["FIELD_HELP", "KGEConfig", "KGEModelKind"]


class KGEModelKind(str, Enum):
    """The KGE models of the paper's Table 2 (PyKEEN implementations)."""

    TRANSE = "transe"
    COMPLEX = "complex"
    ROTATE = "rotate"
    SIMPLE = "simple"

    @property
    def pykeen_name(self) -> str:
        """The model's name in PyKEEN's model resolver."""
        return {"transe": "TransE", "complex": "ComplEx", "rotate": "RotatE", "simple": "SimplE"}[
            self.value
        ]


def _h(text: str) -> dict[str, str]:
    """Field metadata holding the help text the CLI shows."""
    return {"help": text}


@dataclass(frozen=True)
class KGEConfig:
    """Everything that determines a KGE training run (saved in the folder's card)."""

    model: KGEModelKind = field(
        default=KGEModelKind.TRANSE,
        metadata=_h("KGE model: " + ", ".join(k.value for k in KGEModelKind)),
    )
    dim: int = field(
        default=128,
        metadata=_h("Embedding size (complex models: complex dimensions, vectors are 2×dim)."),
    )
    epochs: int = field(
        default=300,
        metadata=_h(
            "Most epochs over the training triples; with early stopping training ends sooner, "
            "when the validation MRR stops improving."
        ),
    )
    batch_size: int = field(default=1024, metadata=_h("Positive triples per batch."))
    lr: float | None = field(
        default=None, metadata=_h("Adam learning rate (default: the model's recipe).")
    )
    negatives: int | None = field(
        default=None,
        metadata=_h("Corrupted triples per positive, sLCWA (default: the model's recipe)."),
    )
    early_stopping: bool = field(
        default=True,
        metadata=_h(
            "Stop when the filtered validation MRR has not improved by 1 % for `patience` "
            "evaluations, and keep the best epoch's weights."
        ),
    )
    eval_every: int = field(
        default=5, metadata=_h("Epochs between two validation evaluations (early stopping).")
    )
    patience: int = field(
        default=2, metadata=_h("Validation evaluations without improvement before stopping.")
    )
    valid_max_triples: int | None = field(
        default=1000,
        metadata=_h(
            "Rank a seeded sample of this many validation triples at each early-stopping "
            "check (None: all)."
        ),
    )
    valid_fraction: float = field(
        default=0.04, metadata=_h("Share of triples held out for validation (paper: 4 %).")
    )
    test_fraction: float = field(
        default=0.06, metadata=_h("Share of triples held out for the test (paper: 6 %).")
    )
    eval_max_triples: int | None = field(
        default=None,
        metadata=_h(
            "Rank a seeded sample of this many test triples (default: all; still filtered "
            "against every known triple)."
        ),
    )
    eval_batch_size: int = field(
        default=64, metadata=_h("Test triples scored at once against all entities (memory).")
    )
    seed: int = field(default=0, metadata=_h("Seed of the split, initialisation and batches."))
    device: str | None = field(
        default=None, metadata=_h("torch device (default: PyKEEN's choice, CUDA when present).")
    )
    progress: bool = field(
        default=True, metadata=_h("Show a progress bar over the epochs (with an ETA).")
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", KGEModelKind(self.model))
        for name in ("dim", "epochs", "batch_size", "eval_batch_size", "eval_every", "patience"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("negatives", "eval_max_triples", "valid_max_triples"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if self.lr is not None and self.lr <= 0:
            raise ValueError(f"lr must be positive, got {self.lr}")
        for name in ("valid_fraction", "test_fraction"):
            if not 0.0 < getattr(self, name) < 0.5:
                raise ValueError(f"{name} must be in (0, 0.5), got {getattr(self, name)}")

    @property
    def train_fraction(self) -> float:
        """``1 − valid_fraction − test_fraction``."""
        return 1.0 - self.valid_fraction - self.test_fraction

    def to_card(self) -> dict[str, Any]:
        """JSON-ready settings (the model as its name)."""
        out = asdict(self)
        out["model"] = self.model.value
        return out


FIELD_HELP: dict[str, str] = {f.name: f.metadata.get("help", "") for f in fields(KGEConfig)}
