"""Lazy package exports: ``__getattr__ = lazy_getattr(__name__, {"Name": "module"})``.

A package's public names resolve on first access, so importing one light submodule (the CLI
reads option enums and help texts at start-up) never loads torch, transformers or pandas.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """Module ``__getattr__`` that imports ``package.<where[name]>`` when ``name`` is asked."""

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
