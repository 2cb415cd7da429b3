"""The training objectives, resolved by their ``--loss`` name (:data:`OBJECTIVES`).

One module per objective holds its own settings section and its entry (:func:`.base.objective`);
a new objective is one module and one line below (import-free: the CLI builds its options from
the registry). Packages add objectives through entry points in ``termnorm.objectives``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from termnorm.registry import Registry
from termnorm.training.objectives import coder, distill, kge_inject, ms_v3, mtcg, triplet
from termnorm.training.objectives.base import objective, reads_of, sections_of, sections_read

__all__ = ["OBJECTIVES", "objective", "reads_of", "sections_of", "sections_read"]

OBJECTIVES: Registry[Callable[..., Any]] = Registry("objective", "--loss", "termnorm.objectives")
"""Every ``--loss`` value's objective (its target: the composition function)."""
for _entry in (
    *coder.ENTRIES,
    ms_v3.ENTRY,
    triplet.ENTRY,
    kge_inject.ENTRY,
    mtcg.ENTRY,
    distill.ENTRY,
):
    OBJECTIVES.add(_entry)
