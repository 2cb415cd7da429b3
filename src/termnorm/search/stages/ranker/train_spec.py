"""The settings of the ranker's training, in a module that imports neither torch nor the
search code (the CLI generates ``termnorm rank train``'s options from them while it
registers its commands, :mod:`termnorm.cli._config_options`).

:class:`RankerTrainConfig` is the optimisation, :class:`RankTrainSpec` everything
``termnorm rank train`` takes (the data and recall of
:class:`~termnorm.search.stages.fit_spec.TrainingDataSpec`, which every learned stage
shares; :func:`~termnorm.search.stages.ranker.training.train_ranker` is the Python entry
point). Each field's metadata is its option: help text, flag, ``exists``.
"""

# option() returns a dataclasses.Field, as field() does: no shared mutable default
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from termnorm.search.spec import option
from termnorm.search.stages.fit_spec import TrainingDataSpec

__all__ = [
    "DEFAULT_HOLDOUT",
    "DEFAULT_K_C",
    "LOSSES",
    "TRAIN_PAIR_LENGTH",
    "RankTrainSpec",
    "RankerTrainConfig",
]

DEFAULT_K_C = 10
"""Candidates recalled per mention and reordered by the ranker."""
DEFAULT_HOLDOUT = 0.2  # documents kept out of the ranker's training for the stacked combiner
TRAIN_PAIR_LENGTH = 48  # tokens of a training pair (the measured recipe; inference reads the card)
LOSSES = ("pointwise", "listwise")


@dataclass(frozen=True)
class RankerTrainConfig:
    """How a ranker is trained (paper defaults where it gives them); each field's metadata
    is its ``termnorm rank train`` option."""

    epochs: int = option(2, "Passes over the pairs.", min=1)
    lr: float = option(3e-5, "Learning rate of the encoder (AdamW).")
    head_lr: float = option(1e-3, "Learning rate of the head.")
    batch_size: int = option(32, "Pairs per step.", min=1)
    warmup: float = option(0.1, "Linear warm-up, a fraction of the steps in [0, 1).")
    weight_decay: float = option(0.01, "AdamW weight decay of the encoder's matrices.")
    seed: int = 0
    loss: str = option(
        "listwise",
        "listwise: softmax over each query's k_c candidates, cross-entropy on the gold "
        "(a batch holds whole queries); pointwise: BCE per pair (the paper's, an ablation).",
    )

    def validate(self) -> None:
        """``ValueError`` naming the bad setting."""
        if self.epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if not 0 <= self.warmup < 1:
            raise ValueError(f"warmup is a fraction of the steps in [0, 1), got {self.warmup}")
        if self.lr <= 0 or self.head_lr <= 0:
            raise ValueError("learning rates must be positive")
        if self.loss not in LOSSES:
            raise ValueError(f"unknown ranker loss {self.loss!r}: use one of {', '.join(LOSSES)}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready settings."""
        return asdict(self)


@dataclass(frozen=True)
class RankTrainSpec(TrainingDataSpec):
    """Everything ``termnorm rank train`` needs (module doc): the data and recall of
    :class:`TrainingDataSpec` (``k_c`` candidates recalled per mention), and the ranker's
    settings. The recall's encoder folder is ``model`` (when it moved), the ranker's start
    ``base_model``.

    ``keywords``: default the shipped vocabulary of ``lang``. ``base_model``: the model folder
    the cross-encoder starts from (default all-MiniLM-L6-v2). ``holdout``: the fraction of
    training documents whose mentions the ranker does not train on (their synonyms still
    serve the search); the card lists them, and ``termnorm rank combine --ranker`` fits the
    combiner on exactly those mentions.
    """

    keywords: Path | None = option(
        None,
        "Keyword file (keyword<TAB>kind); default: the shipped vocabulary of --lang.",
        exists="path",
    )
    lang: str = option("en", "Shipped keyword vocabulary: en or zh.")
    plain: bool = option(
        False,
        "A plain cross-encoder without keyword tokens (BERT-rank): its folder is a "
        "sentence-transformers CrossEncoder.",
        flag="--plain",
    )
    base_model: Path | None = option(
        None, "Model folder the ranker starts from (default all-MiniLM-L6-v2).", flag="--model"
    )
    max_length: int = option(TRAIN_PAIR_LENGTH, "Tokens of a pair.", min=8)
    freeze_embeddings: bool = option(
        False,
        "Keep the word-embedding matrix fixed (a little faster on a CPU; the measured "
        "default trains it).",
        flag="--freeze-embeddings/--train-embeddings",
    )
    holdout: float = option(
        DEFAULT_HOLDOUT,
        "Share of training documents the ranker does not train on; the learned combiner "
        "is fitted on their mentions with the ranker's scores and stored in the folder "
        "(--ranker then orders by its probability). 0: no combiner, paper fusion.",
        min=0.0,
        max=0.95,
    )
    train: RankerTrainConfig = field(default_factory=RankerTrainConfig)

    @classmethod
    def from_options(cls, **values: Any) -> RankTrainSpec:
        """The spec of flat option values (``termnorm rank train``'s, by field name): the
        :class:`RankerTrainConfig` fields go to ``train`` (its ``seed`` is the spec's),
        lists become tuples. ``TypeError`` names an unknown key."""
        own = {f.name for f in fields(cls)} - {"train"}
        loop = {f.name for f in fields(RankerTrainConfig)} - {"seed"}
        unknown = sorted(set(values) - own - loop)
        if unknown:
            raise TypeError(f"unknown rank train setting(s): {', '.join(unknown)}")
        plain: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in values.items()
        }
        train = RankerTrainConfig(**{k: v for k, v in plain.items() if k in loop})
        return cls(**{k: v for k, v in plain.items() if k in own}, train=train)
