"""Lazy package exports: ``__getattr__ = lazy_getattr(__name__, {"Name": "module"})`` and
``__dir__ = lazy_dir(__all__)``.

A package's public names resolve on first access, so importing one light submodule (the CLI
reads option enums and help texts at start-up) never loads torch, transformers or pandas.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_getattr(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """Module ``__getattr__`` that imports ``package.<where[name]>`` when ``name`` is asked."""

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def lazy_dir(names: Iterable[str]) -> Callable[[], list[str]]:
    """Module ``__dir__`` listing ``names`` (the package's ``__all__``), sorted: ``dir()`` and
    tab completion show the lazy exports, which are not attributes until first asked."""
    listed = sorted(names)

    def __dir__() -> list[str]:
        return list(listed)

    return __dir__
