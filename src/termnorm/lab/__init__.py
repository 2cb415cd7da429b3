"""The lab: research tools on top of the evaluators, which product code never imports.

Paired significance tests of two runs (``significance``), cross-fitted choice among settings
(``selection``), the triplet/sieve model-selection grid (``sieve_grid``) and the declared
benchmark suite with its report (``bench``). The lab imports :mod:`termnorm.evaluation` and
the rooms below it; only the lab's CLI commands (``eval compare``, ``eval select``,
``bench``) import the lab. Reading bench suites and drawing plots need the ``lab`` extra
(PyYAML, matplotlib). Names resolve lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.lab.selection import CrossFitSelection, SettingScore, cross_fitted_selection
    from termnorm.lab.sieve_grid import GridDataset, GridResult, grid_markdown, run_sieve_grid
    from termnorm.lab.significance import (
        PairedComparison,
        RunComparison,
        compare_runs,
        mcnemar_p,
    )

__all__ = [
    "CrossFitSelection",
    "GridDataset",
    "GridResult",
    "PairedComparison",
    "RunComparison",
    "SettingScore",
    "compare_runs",
    "cross_fitted_selection",
    "grid_markdown",
    "mcnemar_p",
    "run_sieve_grid",
]

_MODULES = {
    "significance": ("PairedComparison", "RunComparison", "compare_runs", "mcnemar_p"),
    "selection": ("CrossFitSelection", "SettingScore", "cross_fitted_selection"),
    "sieve_grid": ("GridDataset", "GridResult", "grid_markdown", "run_sieve_grid"),
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _MODULES.items() for n in names})
