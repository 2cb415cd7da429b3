"""Registries: the one shape of every extension point (KG formats, detectors, exports,
objectives, search stages), after PyKEEN's class resolver and spaCy's registries.

An :class:`Entry` is a name, the thing it names (a class or a function, given as the object or
as an import path ``"module:attribute"`` that is imported only when :meth:`Entry.load` is
called, so that a face can list the names and generate its flags without importing torch),
and its options dataclass (fields declared with :func:`termnorm.options.opt`; the faces
generate their flags from them). :meth:`Registry.register` adds one, by call or as a
decorator; :meth:`Registry.resolve` returns one, and an unknown name is an
:class:`~termnorm.errors.UnknownNameError` that lists the known names and the closest one.

A third-party package extends a registry without editing termnorm: an entry point in the
registry's group (``termnorm.kg_formats``, ``termnorm.detectors``, ...) whose value is an
:class:`Entry`, read once, the first time the registry is asked for its names.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar, overload

from termnorm.errors import UnknownNameError

__all__ = ["Entry", "Registry", "import_path"]

T = TypeVar("T")


def import_path(path: str) -> Any:
    """The attribute ``path`` (``"package.module:attribute"``) names, imported now.

    Raises:
        ValueError: ``path`` has no ``:``.
    """
    module, sep, attribute = path.partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"{path!r} is not an import path: write it as 'package.module:attribute'")
    value = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered name.

    Attributes:
        name: the name a user writes (``--format obo``, ``detectors: ["tagger"]``).
        target: the class or function, or its import path ``"module:attribute"``.
        options: the options dataclass it takes (``None``: it takes none).
        help: one line for ``--help`` and for the list of known names.
        facts: what this kind of registry needs to know besides (an objective's config
            sections, a stage's spec field), read by the registry's owner.
    """

    name: str
    target: T | str
    options: type | None = None
    help: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)

    def load(self) -> T:
        """The class or function (its import path imported now)."""
        if isinstance(self.target, str):
            return import_path(self.target)  # type: ignore[no-any-return]
        return self.target


class Registry(Generic[T]):
    """Named entries of one kind, each name once, in order of registration.

    Args:
        kind: what an entry is, for messages (``"KG format"``).
        flag: the option a user chose it with, for messages (``"--format"``).
        group: the entry-point group third-party entries are read from (``None``: none).
    """

    def __init__(self, kind: str, flag: str = "", group: str | None = None) -> None:
        self.kind = kind
        self.flag = flag
        self.group = group
        self._entries: dict[str, Entry[T]] = {}
        self._plugins_read = group is None

    @overload
    def register(
        self,
        name: str,
        target: T | str,
        *,
        options: type | None = None,
        help: str = "",
        **facts: Any,
    ) -> Entry[T]: ...

    @overload
    def register(
        self,
        name: str,
        target: None = None,
        *,
        options: type | None = None,
        help: str = "",
        **facts: Any,
    ) -> Callable[[T], T]: ...

    def register(
        self,
        name: str,
        target: T | str | None = None,
        *,
        options: type | None = None,
        help: str = "",
        **facts: Any,
    ) -> Entry[T] | Callable[[T], T]:
        """Register ``target`` as ``name``; without ``target``, a decorator that registers
        what it decorates (and returns it unchanged).

        Raises:
            ValueError: ``name`` is taken, or ``options`` is not a dataclass.
        """
        if target is None:

            def decorate(value: T) -> T:
                self.add(Entry(name, value, options, help, dict(facts)))
                return value

            return decorate
        entry: Entry[T] = Entry(name, target, options, help, dict(facts))
        self.add(entry)
        return entry

    def add(self, entry: Entry[T], before: str | None = None) -> None:
        """Add ``entry`` (see :meth:`register`), last or ``before`` the entry of that name
        (where order matters, as for the search stages).

        Raises:
            ValueError: as :meth:`register`.
            UnknownNameError: ``before`` is not registered.
        """
        if entry.name in self._entries:
            raise ValueError(f"a {self.kind} named {entry.name!r} is already registered")
        if entry.options is not None and not hasattr(entry.options, "__dataclass_fields__"):
            raise ValueError(f"the options of {self.kind} {entry.name!r} must be a dataclass")
        entries = list(self._entries.values())
        at = len(entries) if before is None else entries.index(self.resolve(before))
        entries.insert(at, entry)
        self._entries = {one.name: one for one in entries}

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a test's dummy, say); an unknown name is a ``KeyError``."""
        del self._entries[name]

    def resolve(self, name: str) -> Entry[T]:
        """The entry ``name``.

        Raises:
            UnknownNameError: an unknown name, listing the known ones and the closest.
        """
        self._read_plugins()
        if name in self._entries:
            return self._entries[name]
        known = self.names()
        close = difflib.get_close_matches(str(name), known, n=1)
        where = f" ({self.flag})" if self.flag else ""
        raise UnknownNameError(
            f"unknown {self.kind} {str(name)!r}{where}"
            + (f": did you mean {str(close[0])!r}?" if close else ".")
            + f" Known: {', '.join(known)}"
        )

    def names(self) -> list[str]:
        """The registered names, in order of registration (entry points last)."""
        self._read_plugins()
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        self._read_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        self._read_plugins()
        return iter(list(self._entries.values()))

    def __len__(self) -> int:
        self._read_plugins()
        return len(self._entries)

    def _read_plugins(self) -> None:
        """Add the entries of the installed packages' entry points in :attr:`group`, once.

        Raises:
            TypeError: an entry point's value is not an :class:`Entry`.
        """
        if self._plugins_read:
            return
        self._plugins_read = True
        for point in entry_points(group=str(self.group)):
            entry = point.load()
            if not isinstance(entry, Entry):
                raise TypeError(
                    f"entry point {point.name!r} in {self.group!r} must be a termnorm.registry."
                    f"Entry, got {type(entry).__name__}: fix or uninstall {point.value!r}"
                )
            self.add(entry)
