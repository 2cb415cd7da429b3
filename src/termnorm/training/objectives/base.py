"""What a ``--loss`` value is: an :class:`~termnorm.registry.Entry` of
:data:`termnorm.training.objectives.OBJECTIVES` (import-free: the CLI reads the registry at
start-up to build ``termnorm train``'s options without loading torch).

Its target is its composition function ``(config, kg, mentions, evaluator, dist_info) ->
Trainer`` (:mod:`termnorm.training.composition`), as an import path imported when a run
starts; its options are its own :class:`~termnorm.training.config.base.Section` of
``TrainConfig``; its facts name every section it reads (``sections``, in the order its help
shows them) and the shared settings that only some objectives read (``reads``: ``"kge"``,
``"corpus"``, ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from termnorm.registry import Entry
from termnorm.training.config.base import Section

__all__ = ["objective", "reads_of", "sections_of", "sections_read"]


def objective(
    name: str,
    trainer: str,
    options: type[Section] | None,
    *sections: type[Section],
    reads: tuple[str, ...] = (),
    help: str = "",
) -> Entry[Any]:
    """The entry of ``--loss name``: ``trainer`` its composition function's import path,
    ``options`` its own section, ``sections`` every section it reads (default: ``options``),
    ``reads`` the objective-only shared settings it reads."""
    read = sections or ((options,) if options is not None else ())
    return Entry(name, trainer, options, help, {"sections": read, "reads": reads})


def sections_of(entry: Entry[Any]) -> tuple[type[Section], ...]:
    """The ``TrainConfig`` sections objective ``entry`` reads (its options alone unless its
    ``sections`` fact names them)."""
    default = () if entry.options is None else (entry.options,)
    return tuple(entry.facts.get("sections", default))


def reads_of(entry: Entry[Any]) -> tuple[str, ...]:
    """The objective-only shared settings (``"kge"``, ``"corpus"``, ...) ``entry`` reads."""
    return tuple(entry.facts.get("reads", ()))


def sections_read(entries: Iterable[Entry[Any]]) -> list[type[Section]]:
    """Every section of ``entries``, each once, in order of registration."""
    return list(dict.fromkeys(kind for entry in entries for kind in sections_of(entry)))
