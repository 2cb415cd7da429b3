"""Configuration of one KGE training job (``termnorm kge train``): a dataclass whose field help
the CLI reuses.

Defaults follow the paper where it says something (the split is its 90 % training, 6 % test,
4 % validation; embedding size 128 is ours). How each model trains (loss, regulariser,
initialisation, negatives per positive or 1-N scoring, learning rate, batch size) comes from
its recipe in :mod:`termnorm.kge.recipes`: ``lr``, ``negatives`` and ``batch_size`` left at
``None`` take the recipe's values.
Training runs up to ``epochs`` epochs and stops early when the filtered MRR on (a seeded sample
of) the validation split stops improving.
"""

# opt() returns a dataclasses.Field, as field() does: no shared mutable default
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from enum import Enum
from typing import Any

from termnorm.options import check_bounds, opt

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


@dataclass(frozen=True)
class KGEConfig:
    """Everything that determines a KGE training run (saved in the folder's card)."""

    model: KGEModelKind = opt(
        KGEModelKind.TRANSE, "KGE model: " + ", ".join(k.value for k in KGEModelKind)
    )
    dim: int = opt(
        128, "Embedding size (complex models: complex dimensions, vectors are 2×dim).", min=1
    )
    epochs: int = opt(
        300,
        "Most epochs over the training triples; with early stopping training ends sooner, "
        "when the validation MRR stops improving.",
        min=1,
    )
    batch_size: int | None = opt(
        None,
        "Positive triples (sLCWA) or (h, r) pairs (1-N) per batch (default: the model's "
        "recipe, 1,024 triples; 256 pairs for ComplEx).",
        min=1,
    )
    lr: float | None = opt(None, "Adam learning rate (default: the model's recipe).")
    negatives: int | None = opt(
        None,
        "Corrupted triples per positive, sLCWA (default: the model's recipe; ComplEx scores "
        "every entity, 1-N with reciprocal relations, unless this is given).",
        min=1,
    )
    early_stopping: bool = opt(
        True,
        "Stop when the filtered validation MRR has not improved by 1 % for `patience` "
        "evaluations, and keep the best epoch's weights.",
    )
    eval_every: int = opt(5, "Epochs between two validation evaluations (early stopping).", min=1)
    patience: int = opt(2, "Validation evaluations without improvement before stopping.", min=1)
    valid_max_triples: int | None = opt(
        1000,
        "Rank a seeded sample of this many validation triples at each early-stopping "
        "check (None: all).",
        min=1,
    )
    valid_fraction: float = opt(0.04, "Share of triples held out for validation (paper: 4 %).")
    test_fraction: float = opt(0.06, "Share of triples held out for the test (paper: 6 %).")
    eval_max_triples: int | None = opt(
        None,
        "Rank a seeded sample of this many test triples (default: all; still filtered "
        "against every known triple).",
        min=1,
    )
    eval_batch_size: int = opt(
        64, "Test triples scored at once against all entities (memory).", min=1
    )
    seed: int = opt(0, "Seed of the split, initialisation and batches.")
    device: str | None = opt(None, "torch device (default: PyKEEN's choice, CUDA when present).")
    progress: bool = opt(True, "Show a progress bar over the epochs (with an ETA).")

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", KGEModelKind(self.model))
        check_bounds(self, label=str)
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


FIELD_HELP: dict[str, str] = {f.name: f.metadata["help"] for f in fields(KGEConfig)}
