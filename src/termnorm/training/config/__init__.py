"""Training settings: the shared ones plus one section per objective, all ``termnorm train``
options (import-free: the CLI generates its flags from them at start-up).

Every field of :class:`~termnorm.training.config.shared.SharedConfig` and of the sections
(:mod:`.sampler`, :mod:`.coder`, :mod:`.prototype`, :mod:`.injection`, :mod:`.triplet`,
:mod:`.mtcg`) is an option; field names are unique across them, so a flat dict — a
``--config`` file, ``termnorm.train(**overrides)``, a saved ``training_config.json`` — maps
onto them by name (:meth:`TrainConfig.from_dict`, which refuses unknown keys naming the
closest valid ones) and ``to_dict`` writes the same flat dict back. Each section checks its
own rules (``validate(run)``). ``TrainConfig.paper()`` gives CODER's full-size settings (MS +
relation loss, k = 128, m = 8, lr 2e-5, 10k warm-up, 100k steps, accumulation 8).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termnorm.training.config.base import Section
from termnorm.training.config.coder import CoderLossConfig
from termnorm.training.config.injection import InjectionConfig
from termnorm.training.config.mtcg import ImplicationWeighting, MtcgConfig, NegativeKind
from termnorm.training.config.prototype import PrototypeConfig
from termnorm.training.config.sampler import KGSamplerConfig, check_batch_shape
from termnorm.training.config.shared import (
    PROTOTYPE_LOSSES,
    BatchKind,
    LossKind,
    Precision,
    SharedConfig,
    TrainData,
)
from termnorm.training.config.triplet import TripletConfig

__all__ = [
    "PROTOTYPE_LOSSES",
    "RUNTIME_KEYS",
    "BatchKind",
    "CoderLossConfig",
    "ImplicationWeighting",
    "InjectionConfig",
    "KGSamplerConfig",
    "LossKind",
    "MtcgConfig",
    "NegativeKind",
    "Precision",
    "PrototypeConfig",
    "SharedConfig",
    "TrainConfig",
    "TrainData",
    "TripletConfig",
    "check_batch_shape",
]

# settings a resumed run may change: where and how fast it runs, how often it logs/saves, and
# `steps` (to extend a run: counter-based batches repeat the interrupted run's steps); any other
# change (KG, model, loss, lr, ...) is refused on resume
RUNTIME_KEYS = frozenset({
    "device", "threads", "overwrite", "log_every", "checkpoint_every", "eval_every",
    "keep_checkpoints", "clean_checkpoints", "steps",
})  # fmt: skip


@dataclass
class TrainConfig(SharedConfig):
    """Everything that determines a training run (saved flat in checkpoints and the model card)."""

    sampler: KGSamplerConfig = field(default_factory=KGSamplerConfig)
    coder: CoderLossConfig = field(default_factory=CoderLossConfig)
    prototype: PrototypeConfig = field(default_factory=PrototypeConfig)
    injection: InjectionConfig = field(default_factory=InjectionConfig)
    triplet: TripletConfig = field(default_factory=TripletConfig)
    mtcg: MtcgConfig = field(default_factory=MtcgConfig)

    @property
    def sections(self) -> list[Section]:
        """The objective sections, in field order."""
        return [getattr(self, name) for name in _sections()]

    @property
    def keywords(self) -> Path | None:
        """``mtcg.keywords`` by its flat name (an input file ``termnorm.train`` guards)."""
        return self.mtcg.keywords

    def get(self, key: str) -> Any:
        """The typed value of flat key ``key`` (``get("m")`` is ``sampler.m``)."""
        owner = _owners()[key]
        return getattr(self if owner is None else getattr(self, owner), key)

    def changed_from(self, saved: dict[str, Any]) -> list[str]:
        """``"key (checkpoint: old, now: new)"`` for each setting that differs from ``saved``
        (a checkpoint's flat dict; paths compared resolved), :data:`RUNTIME_KEYS` and keys
        ``saved`` lacks aside."""
        changed = []
        for key, value in self.to_dict().items():
            if key in RUNTIME_KEYS or key not in saved:
                continue
            old = saved[key]
            if isinstance(self.get(key), Path) and old is not None:
                same = Path(old).resolve() == Path(value).resolve()
            else:
                same = old == value
            if not same:
                changed.append(f"{key} (checkpoint: {old!r}, now: {value!r})")
        return changed

    def validate(self) -> None:
        """Fail fast on impossible settings, naming the flag: the shared rules, then each
        section's own."""
        super().validate()
        for section in self.sections:
            section.validate(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: object = None) -> TrainConfig:
        """The config of flat ``data`` (:meth:`to_dict`'s keys); values may be raw (JSON) or
        typed (paths, enums).

        Raises:
            ValueError: for a key that is not an option (a misspelt ``--config`` key or
                keyword must not be ignored silently), naming ``source`` (e.g. the file the
                keys came from) and the closest valid keys.
        """
        owners = _owners()
        unknown = sorted(set(data) - set(owners))
        if unknown:
            hints_text = "; ".join(
                f"{key}: did you mean {' or '.join(close)}?"
                for key in unknown
                if (close := difflib.get_close_matches(key, sorted(owners), n=2))
            )
            raise ValueError(
                (f"{source}: " if source is not None else "")
                + f"unknown TrainConfig key(s) {', '.join(unknown)}"
                + (f" ({hints_text})" if hints_text else "")
                + "; the keys are the 'termnorm train' options with '_' for '-'"
            )
        shared = {key: value for key, value in data.items() if owners[key] is None}
        sections: dict[str, Any] = {
            name: kind(**{key: v for key, v in data.items() if owners[key] == name})
            for name, kind in _sections().items()
        }
        return cls(**shared, **sections)

    @classmethod
    def paper(cls, **overrides: Any) -> TrainConfig:
        """CODER_ENG's full-size settings (GPU): k 128, m 8, lr 2e-5, 100k steps, accum 8."""
        base: dict[str, Any] = dict(
            loss=LossKind.CODER, k=128, m=8, lr=2e-5, steps=100_000, warmup=10_000,
            grad_accum=8, max_length=32, synonym_share=0.0, hard_negatives=False,
            freeze_layers=0, freeze_embeddings=False, weight_decay=0.0,
        )  # fmt: skip
        return cls.from_dict({**base, **overrides}, "TrainConfig.paper")


@functools.cache
def _sections() -> dict[str, type[Section]]:
    """``{field name: section class}`` of :class:`TrainConfig`."""
    return {
        f.name: f.default_factory  # type: ignore[misc]
        for f in dataclasses.fields(TrainConfig)
        if f.default_factory is not dataclasses.MISSING
    }


@functools.cache
def _owners() -> dict[str, str | None]:
    """``{flat key: its section's field name, None for a shared setting}``."""
    owners: dict[str, str | None] = {f.name: None for f in dataclasses.fields(SharedConfig)}
    for name, kind in _sections().items():
        for f in dataclasses.fields(kind):  # type: ignore[arg-type]
            if f.name in owners:
                raise TypeError(f"{kind.__name__}.{f.name} repeats the option of another field")
            owners[f.name] = name
    return owners
