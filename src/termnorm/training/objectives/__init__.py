"""The training objectives, resolved by their ``--loss`` name (:class:`Registry`).

One module per objective declares its :class:`Objective` (its settings and its trainer); a new
objective is one module and one line below (import-free: the CLI builds its options from it).
"""

from __future__ import annotations

from termnorm.training.objectives import coder, distill, kge_inject, ms_v3, mtcg, triplet
from termnorm.training.objectives.base import Objective, Registry

__all__ = ["OBJECTIVES", "Objective", "Registry"]

OBJECTIVES = Registry(
    [
        *coder.OBJECTIVES,
        ms_v3.OBJECTIVE,
        triplet.OBJECTIVE,
        kge_inject.OBJECTIVE,
        mtcg.OBJECTIVE,
        distill.OBJECTIVE,
    ]
)
"""Every ``--loss`` value's objective."""
