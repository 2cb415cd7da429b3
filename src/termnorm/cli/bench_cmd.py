"""``termnorm bench SPEC.yaml --out REPORT_DIR``: run a benchmark suite and write its report."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from termnorm.cli._options import threads_option, use_threads

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


def _command(
    spec: Path,
    out: Path,
    cache_dir: Path | None,
    force: bool,
    models: list[str],
    datasets: list[str],
) -> str:
    parts = ["termnorm", "bench", str(spec), "--out", str(out)]
    if cache_dir is not None:
        parts += ["--cache-dir", str(cache_dir)]
    for name in models:
        parts += ["--model", name]
    for name in datasets:
        parts += ["--dataset", name]
    if force:
        parts.append("--force")
    return shlex.join(parts)


def register(app: typer.Typer) -> None:
    """Attach ``bench`` to ``app``."""

    @app.command("bench", help=BENCH_HELP)
    def bench(
        spec: Path = typer.Argument(..., help="Suite file (YAML), e.g. benchmarks/dev.yaml."),
        out: Path = typer.Option(..., "--out", help="Report folder (created)."),
        cache_dir: Path | None = typer.Option(
            None, "--cache-dir", help="Result cache (default: <user cache>/termnorm/bench)."
        ),
        force: bool = typer.Option(False, "--force", help="Recompute, ignoring cached results."),
        models: list[str] | None = typer.Option(
            None, "--model", help="Only this model or baseline of the suite (repeatable)."
        ),
        datasets: list[str] | None = typer.Option(
            None, "--dataset", help="Only this dataset of the suite (repeatable)."
        ),
        progress: bool = typer.Option(False, "--progress", help="Show encoding progress bars."),
        threads: int | None = threads_option(),
    ) -> None:
        from termnorm.lab.bench import load_spec, run_bench, write_report

        use_threads(threads)

        suite = load_spec(spec)
        suite = _select(suite, models or [], datasets or [])
        results = run_bench(suite, cache_dir=cache_dir, force=force, show_progress=progress)
        command = _command(spec, out, cache_dir, force, models or [], datasets or [])
        report = write_report(results, out, command)
        failed = [c for c in results.cells if c.error]
        typer.echo(
            f"wrote {report} ({len(results.cells)} cells, {results.cache_hits} from cache, "
            f"{len(failed)} failed) in {results.wall_seconds:.0f} s"
        )
        for cell in failed:
            typer.echo(f"  {cell.model} on {cell.dataset}: {cell.error}", err=True)


def _select(suite: BenchSpec, models: list[str], datasets: list[str]) -> BenchSpec:
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
