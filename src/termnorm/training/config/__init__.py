"""Training settings: the shared ones plus one section per objective, all ``termnorm train``
options (import-free: the CLI generates its flags from them at start-up).

Every field of :class:`~termnorm.training.config.shared.SharedConfig` and of the sections
(the batch sources' :mod:`.sampler` and :mod:`.prototype`, and each objective's own in its
module of :mod:`termnorm.training.objectives`) is an option; field names are unique across them, so a flat dict — a
``--config`` file, ``termnorm.train(**overrides)``, a saved ``training_config.json`` — maps
onto them by name (:meth:`TrainConfig.from_dict`, which refuses unknown keys naming the
closest valid ones) and ``to_dict`` writes the same flat dict back. Each section checks its
own rules (``validate(run)``). ``TrainConfig.paper()`` gives CODER's full-size settings (MS +
relation loss, k = 128, m = 8, lr 2e-5, 10k warm-up, 100k steps, accumulation 8).
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.training.config.base import Section
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
from termnorm.training.objectives.base import sections_read

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from termnorm.registry import Registry

__all__ = [
    "PROTOTYPE_LOSSES",
    "RUNTIME_KEYS",
    "BatchKind",
    "KGSamplerConfig",
    "LossKind",
    "Precision",
    "PrototypeConfig",
    "SharedConfig",
    "TrainConfig",
    "TrainData",
    "check_batch_shape",
]

# settings a resumed run may change: where and how fast it runs, how often it logs/saves, and
# `steps` (to extend a run: counter-based batches repeat the interrupted run's steps); any other
# change (KG, model, loss, lr, ...) is refused on resume
RUNTIME_KEYS = frozenset({
    "device", "threads", "overwrite", "log_every", "checkpoint_every", "eval_every",
    "keep_checkpoints", "clean_checkpoints", "steps",
})  # fmt: skip


@dataclass(eq=False)
class TrainConfig(SharedConfig):
    """Everything that determines a training run (saved flat in checkpoints and the model card):
    the shared settings, and one section per :class:`Section` the registered objectives read
    (``config.sampler``, ``config.mtcg``, ...; :data:`termnorm.training.objectives.OBJECTIVES`)."""

    def __post_init__(self) -> None:
        """Typed values; ``loss`` resolved by name (an unknown one lists the known ones); every
        section at its defaults."""
        super().__post_init__()
        self.loss = _registry().resolve(self.loss).name
        self._sections: dict[str, Section] = {
            kind.name: kind() for kind in sections_read(_registry())
        }

    def __getattr__(self, name: str) -> Any:
        """The section ``name`` (``config.sampler``)."""
        sections = self.__dict__.get("_sections", {})
        if name in sections:
            return sections[name]
        raise AttributeError(f"'TrainConfig' object has no attribute or section {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TrainConfig) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    @property
    def sections(self) -> list[Section]:
        """The objective sections, in the registry's order."""
        return list(self._sections.values())

    @property
    def keywords(self) -> Path | None:
        """``mtcg.keywords`` by its flat name (an input file ``termnorm.train`` guards)."""
        return self.get("keywords")  # type: ignore[no-any-return]

    def get(self, key: str) -> Any:
        """The typed value of flat key ``key`` (``get("m")`` is ``sampler.m``)."""
        owner = _owners()[key]
        return getattr(self if owner is None else self._sections[owner], key)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready flat dict: the shared settings, then each section's fields."""
        out = super().to_dict()
        for section in self.sections:
            out.update(section.to_dict())
        return out

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with ``changes`` (flat keys)."""
        return TrainConfig.from_dict({**self.to_dict(), **changes})

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
                keys came from) and the closest valid keys; for an unknown ``loss``.
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
        config = cls(**{key: value for key, value in data.items() if owners[key] is None})
        for name, section in config._sections.items():
            config._sections[name] = type(section)(
                **{key: value for key, value in data.items() if owners[key] == name}
            )
        return config

    @classmethod
    def paper(cls, **overrides: Any) -> TrainConfig:
        """CODER_ENG's full-size settings (GPU): k 128, m 8, lr 2e-5, 100k steps, accum 8."""
        base: dict[str, Any] = dict(
            loss=LossKind.CODER,
            k=128,
            m=8,
            lr=2e-5,
            steps=100_000,
            warmup=10_000,
            grad_accum=8,
            max_length=32,
            synonym_share=0.0,
            hard_negatives=False,
            freeze_layers=0,
            freeze_embeddings=False,
            weight_decay=0.0,
        )
        return cls.from_dict({**base, **overrides}, "TrainConfig.paper")


def _registry() -> Registry[Callable[..., Any]]:
    """The objectives registry (imported here: its modules import this package's)."""
    from termnorm.training.objectives import OBJECTIVES

    return OBJECTIVES


def _owners() -> dict[str, str | None]:
    """``{flat key: its section's name, None for a shared setting}``."""
    owners: dict[str, str | None] = {f.name: None for f in dataclasses.fields(SharedConfig)}
    for kind in sections_read(_registry()):
        for f in dataclasses.fields(kind):  # type: ignore[arg-type]
            if f.name in owners:
                raise TypeError(f"{kind.__name__}.{f.name} repeats the option of another field")
            owners[f.name] = kind.name
    return owners
