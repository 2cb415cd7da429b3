"""What a ``--loss`` value is, and the registry that resolves one by name (as PyKEEN's class
resolver does: an unknown name is an error that lists the known ones).

An :class:`Objective` names its settings — its sections of ``TrainConfig`` and the shared
settings that only some objectives read — and its composition function, as an import path
(``"termnorm.training.triplet:triplet_trainer"``) that is imported when a run starts: the CLI
reads the registry at start-up to build ``termnorm train``'s options without loading torch.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from termnorm.training.config.base import Section

__all__ = ["Objective", "Registry"]


@dataclass(frozen=True)
class Objective:
    """One ``--loss`` value.

    Attributes:
        name: the ``--loss`` value (``"triplet"``).
        trainer: ``"module:function"``, the composition function ``(config, kg, mentions,
            evaluator, dist_info) -> Trainer`` (:mod:`termnorm.training.protocols`).
        sections: the ``TrainConfig`` sections it reads (their fields are its own options).
        reads: the shared settings only some objectives read (``"kge"``, ``"corpus"``, ...)
            that this one does; ``termnorm train --loss NAME --help`` shows them.
    """

    name: str
    trainer: str
    sections: tuple[type[Section], ...] = ()
    reads: tuple[str, ...] = ()

    def composition(self) -> Callable[..., Any]:
        """The composition function :attr:`trainer` names (imported now)."""
        module, _, function = self.trainer.partition(":")
        return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]


class Registry:
    """The objectives by name; each name once."""

    def __init__(self, objectives: Iterable[Objective] = ()) -> None:
        self._by_name: dict[str, Objective] = {}
        for objective in objectives:
            self.register(objective)

    def register(self, objective: Objective) -> None:
        """Add ``objective``; a name already taken is a ``ValueError``."""
        if objective.name in self._by_name:
            raise ValueError(f"an objective named {objective.name!r} is already registered")
        self._by_name[objective.name] = objective

    def unregister(self, name: str) -> None:
        """Remove the objective ``name`` (a test's dummy, say)."""
        del self._by_name[name]

    def resolve(self, name: str) -> Objective:
        """The objective ``name``.

        Raises:
            ValueError: an unknown name, listing the known ones (and the closest).
        """
        if name in self._by_name:
            return self._by_name[name]
        close = difflib.get_close_matches(str(name), self.names(), n=1)
        raise ValueError(
            f"unknown objective {str(name)!r} (--loss)"
            + (f": did you mean {close[0]}?" if close else "")
            + f" Known objectives: {', '.join(self.names())}"
        )

    def names(self) -> list[str]:
        """The registered names, in order of registration."""
        return [str(name) for name in self._by_name]

    def __iter__(self) -> Iterator[Objective]:
        return iter(self._by_name.values())

    def sections(self) -> list[type[Section]]:
        """Every objective's sections, each once, in order of registration."""
        return list(dict.fromkeys(kind for objective in self for kind in objective.sections))

    def reads(self) -> set[str]:
        """The shared settings some objective reads (objective-only, not every objective's)."""
        return {name for objective in self for name in objective.reads}
