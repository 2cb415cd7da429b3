"""``termnorm bench SPEC.yaml --out REPORT_DIR``: run a benchmark suite and write its report."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from termnorm.cli._config_options import options_of, with_config_options
from termnorm.cli._options import use_threads
from termnorm.evaluation.options import BenchRunOptions

if TYPE_CHECKING:
    from termnorm.lab.bench import BenchSpec

__all__ = ["register"]

BENCH_HELP = """Run a declared suite (models × datasets × evaluators) and write a report.

REPORT_DIR receives report.md (tables with the best value per column in bold, the exact
command, versions, timings), PNG plots (acc@k curves, MCSM per type, clustering F1 against θ,
t-SNE of terms) and results.json. Results are cached per (model fingerprint, dataset,
evaluator) in --cache-dir, so running the same suite again only re-renders the report.

Examples:

  termnorm bench benchmarks/dev.yaml --out reports/dev

  termnorm bench benchmarks/dev.yaml --out reports/dev --model base --dataset mayosrs

  termnorm bench my_suite.yaml --out reports/mine --cache-dir .bench-cache --force
"""


def _command(spec: Path, out: Path, options: BenchRunOptions) -> str:
    """The command line the report shows (the options that choose what is computed)."""
    parts = ["termnorm", "bench", str(spec), "--out", str(out)]
    if options.cache_dir is not None:
        parts += ["--cache-dir", str(options.cache_dir)]
    for name in options.models or ():
        parts += ["--model", name]
    for name in options.datasets or ():
        parts += ["--dataset", name]
    if options.force:
        parts.append("--force")
    return shlex.join(parts)


def register(app: typer.Typer) -> None:
    """Attach ``bench`` to ``app``."""

    @app.command("bench", help=BENCH_HELP)
    @with_config_options(BenchRunOptions)
    def bench(
        spec: Path = typer.Argument(..., help="Suite file (YAML), e.g. benchmarks/dev.yaml."),
        out: Path = typer.Option(..., "--out", help="Report folder (created)."),
        **fields: Any,
    ) -> None:
        from termnorm.lab.bench import load_spec, run_bench, write_report

        options = options_of(BenchRunOptions, fields)
        use_threads(options.threads)
        suite = _select(load_spec(spec), options.models or (), options.datasets or ())
        results = run_bench(suite, options.cache_dir, options.force, options.progress)
        report = write_report(results, out, _command(spec, out, options))
        failed = [c for c in results.cells if c.error]
        typer.echo(
            f"wrote {report} ({len(results.cells)} cells, {results.cache_hits} from cache, "
            f"{len(failed)} failed) in {results.wall_seconds:.0f} s"
        )
        for cell in failed:
            typer.echo(f"  {cell.model} on {cell.dataset}: {cell.error}", err=True)


def _select(suite: BenchSpec, models: tuple[str, ...], datasets: tuple[str, ...]) -> BenchSpec:
    """The suite restricted to the named models and datasets (unknown names are errors)."""
    for wanted, known, what in (
        (models, [m.name for m in suite.models], "model"),
        (datasets, [d.name for d in suite.datasets], "dataset"),
    ):
        unknown = sorted(set(wanted) - set(known))
        if unknown:
            raise typer.BadParameter(f"unknown {what}(s) {unknown}; the suite has {known}")
    return dataclasses.replace(
        suite,
        models=[m for m in suite.models if not models or m.name in models],
        datasets=[d for d in suite.datasets if not datasets or d.name in datasets],
    )
