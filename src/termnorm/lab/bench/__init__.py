"""``termnorm bench``: a declared suite of models × datasets × evaluators, cached, reported.

``load_spec`` reads the suite file, ``run_bench`` evaluates it (results cached per model
fingerprint, dataset content and evaluator), ``write_report`` writes Markdown + PNG plots.
"""

from termnorm.evaluation.bench.report import write_report
from termnorm.evaluation.bench.runner import BenchResults, Cell, run_bench
from termnorm.evaluation.bench.spec import BenchSpec, EvaluatorKind, load_spec

__all__ = [
    "BenchResults",
    "BenchSpec",
    "Cell",
    "EvaluatorKind",
    "load_spec",
    "run_bench",
    "write_report",
]
