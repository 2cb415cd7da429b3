"""``termnorm bench``: a declared suite of models × datasets × evaluators, cached, reported.

``load_spec`` reads the suite file, ``run_bench`` evaluates it (results cached per model
fingerprint, dataset content and evaluator), ``write_report`` writes Markdown + PNG plots.
Modules: ``spec`` (the suite file), ``cache`` (results on disk), ``session`` (what a run
loads once: KGs, the model's memo encoder and indexes), ``tasks`` (one function per
evaluator kind), ``runner``, ``report``, ``plots``, ``projection`` (t-SNE). Names resolve
lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.lab.bench.report import write_report
    from termnorm.lab.bench.runner import BenchResults, Cell, run_bench
    from termnorm.lab.bench.session import BenchSession
    from termnorm.lab.bench.spec import BenchSpec, EvaluatorKind, load_spec

__all__ = [
    "BenchResults",
    "BenchSession",
    "BenchSpec",
    "Cell",
    "EvaluatorKind",
    "load_spec",
    "run_bench",
    "write_report",
]

_MODULES = {
    "report": ("write_report",),
    "runner": ("BenchResults", "Cell", "run_bench"),
    "session": ("BenchSession",),
    "spec": ("BenchSpec", "EvaluatorKind", "load_spec"),
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _MODULES.items() for n in names})
