"""``termnorm eval compare BASE RUN [RUN ...]``: is a model better than a baseline, per mention?
``termnorm eval select BASE --setting NAME=FILE[,FILE…] …``: pick a setting, honestly.

Reads prediction files written by ``termnorm eval normalize --predictions`` on the same
mentions and prints, per run, acc@k, Δ, the discordant counts and the exact McNemar p; then
the runs pooled per mention (seeds of one recipe) with a paired-bootstrap confidence interval
and p (:mod:`termnorm.lab.significance`). The bootstrap resamples documents where the
mentions come from two or more (mentions of one article are not independent) and single
mentions otherwise (``--unit auto``); the output says which. ``--unit document`` or
``--unit mention`` forces one. ``--json`` prints the same as one object, input files first.

``eval select``: given prediction files of several settings (an interpolation weight, a step
count, a recipe; each with one or more seeds) and of a baseline on the same mentions, prints
each setting's pooled acc@k and Δ, the naive pick (best on all mentions, scored on them:
optimistic), and the cross-fitted Δ: every document scored by the setting that is best on the
other documents, with a cluster-bootstrap interval that repeats the choice in each draw
(:mod:`termnorm.lab.selection`). List the default setting first: ties go to it.

Unreadable or mismatched files end with one ``error:`` line and exit 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from termnorm.cli._config_options import options_of, with_config_options
from termnorm.cli._output import print_json
from termnorm.cli.eval_cmd import eval_app
from termnorm.evaluation.options import BootstrapOptions, ResampleUnit

if TYPE_CHECKING:
    from termnorm.evaluation.predictions import MentionKey
    from termnorm.lab.selection import CrossFitSelection
    from termnorm.lab.significance import PairedComparison

__all__ = ["ResampleUnit", "resample_groups"]


JSON_OPTION = typer.Option(False, "--json", help="Print one JSON object.")


def resample_groups(unit: ResampleUnit, predictions: Path) -> dict[MentionKey, str] | None:
    """Mention → document for ``unit`` (None: resample mentions), read from ``predictions``."""
    from termnorm.evaluation.predictions import read_documents

    if unit is ResampleUnit.mention:
        return None
    documents = read_documents(predictions)
    if unit is ResampleUnit.auto and len(set(documents.values())) < 2:
        return None
    return documents


_COMPARE_EXAMPLES = """
Examples:

  termnorm eval normalize --index medic_idx NCBIdevelopset_corpus.txt --predictions base.jsonl

  termnorm eval compare base.jsonl trained.jsonl

  termnorm eval compare base.jsonl seed13.jsonl seed7.jsonl seed21.jsonl --json

  termnorm eval compare base.jsonl trained.jsonl --unit mention   # resample single mentions
"""


def _labels(paths: list[Path]) -> list[str]:
    """File stems where they tell the files apart, else the paths as given."""
    stems = [path.stem for path in paths]
    return stems if len(set(stems)) == len(stems) else [str(path) for path in paths]


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _compare_table(result: PairedComparison) -> Table:
    table = Table(title=f"acc@{result.k} on {result.n} mentions, paired with {result.base_name}")
    for name, justify in [("run", "left"), ("acc", "right"), ("Δ", "right")]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for name in ("only base", "only run", "McNemar p"):
        table.add_column(name, justify="right")
    table.add_row(result.base_name, _pct(result.base_accuracy), "", "", "", "")
    for run in result.runs:
        table.add_row(
            run.name,
            _pct(run.accuracy),
            f"{100 * run.delta:+.1f}",
            str(run.only_base),
            str(run.only_run),
            f"{run.mcnemar_p:.3g}",
        )
    return table


def _pooled_line(result: PairedComparison) -> str:
    label = "pooled over runs" if len(result.runs) > 1 else "bootstrap"
    over = f"{result.documents} documents" if result.documents else "mentions"
    return (
        f"{label}: acc {_pct(result.mean_accuracy)}, Δ {100 * result.delta:+.1f} "
        f"[{100 * result.ci_low:+.1f}, {100 * result.ci_high:+.1f}] "
        f"({100 * result.confidence:.0f}% paired bootstrap over {over}, {result.n_boot} "
        f"draws), p = {result.bootstrap_p:.2g}; sign-flip test over the same units "
        f"p = {result.permutation_p:.2g}"
    )


@eval_app.command("compare", epilog=_COMPARE_EXAMPLES)
@with_config_options(BootstrapOptions)
def compare_cmd(
    base: Path = typer.Argument(..., help="Predictions of the baseline (JSONL)."),
    runs: list[Path] = typer.Argument(
        ..., help="Predictions of one or more runs (e.g. seeds of one recipe), same mentions."
    ),
    json_out: bool = JSON_OPTION,
    **fields: Any,
) -> None:
    """Paired acc@k of runs against a baseline: McNemar per run, bootstrap pooled."""
    from termnorm.evaluation.predictions import read_correctness
    from termnorm.lab.significance import compare_runs

    options = options_of(BootstrapOptions, fields)
    k = options.k

    files = [base, *runs]
    if len({path.resolve() for path in files}) != len(files):
        raise typer.BadParameter("give each file once (the baseline is not also a run)")
    names = _labels(files)
    result = compare_runs(
        read_correctness(base, k),
        {name: read_correctness(path, k) for name, path in zip(names[1:], runs, strict=True)},
        base_name=names[0],
        k=k,
        n_boot=options.n_boot,
        confidence=options.confidence,
        seed=options.seed,
        groups=resample_groups(options.unit, base),
    )
    if json_out:
        print_json({"base_file": str(base), "run_files": list(map(str, runs)), **result.to_dict()})
        return
    console = Console()
    console.print(_compare_table(result))
    console.print(_pooled_line(result))


_SELECT_EXAMPLES = """
Examples:

  termnorm eval select base.jsonl --setting a1=a1_s13.jsonl,a1_s7.jsonl \\
      --setting a0.6=a06_s13.jsonl,a06_s7.jsonl

  termnorm eval select base.jsonl --setting 600=r600.jsonl --setting 1200=r1200.jsonl --json
"""


def _parse_setting(value: str) -> tuple[str, list[Path]]:
    name, sep, files = value.partition("=")
    paths = [Path(part) for part in files.split(",") if part.strip()]
    if not sep or not name.strip() or not paths:
        raise typer.BadParameter(
            f"{value!r}: write a setting as NAME=FILE or NAME=FILE1,FILE2 (one file per seed)",
            param_hint="--setting",
        )
    return name.strip(), paths


def _select_table(result: CrossFitSelection) -> Table:
    table = Table(title=f"acc@{result.k} on {result.n} mentions, paired with {result.base_name}")
    for name in ("setting", "runs", "acc", "Δ", "chosen for"):
        table.add_column(name, justify="left" if name == "setting" else "right")
    table.add_row(result.base_name, "", f"{100 * result.base_accuracy:.1f}", "", "")
    for setting in result.settings:
        table.add_row(
            setting.name,
            str(setting.runs),
            f"{100 * setting.accuracy:.1f}",
            f"{100 * setting.delta:+.1f}",
            f"{result.chosen[setting.name]} of {result.groups}",
        )
    return table


@eval_app.command("select", epilog=_SELECT_EXAMPLES)
@with_config_options(BootstrapOptions)
def select_cmd(
    base: Path = typer.Argument(..., help="Predictions of the baseline (JSONL)."),
    setting: list[str] = typer.Option(
        ...,
        "--setting",
        help="NAME=FILE[,FILE…]: one setting and its runs' predictions; give two or more.",
    ),
    json_out: bool = JSON_OPTION,
    **fields: Any,
) -> None:
    """Cross-fitted choice among settings: what picking the best on dev is really worth."""
    from termnorm.evaluation.predictions import read_correctness
    from termnorm.lab.selection import cross_fitted_selection

    options = options_of(BootstrapOptions, fields)
    k = options.k

    parsed = dict(_parse_setting(value) for value in setting)
    if len(parsed) != len(setting):
        raise typer.BadParameter("give each setting name once", param_hint="--setting")
    baseline = read_correctness(base, k)
    documents = resample_groups(options.unit, base)
    groups = documents if documents is not None else {key: repr(key) for key in baseline}
    result = cross_fitted_selection(
        baseline,
        {name: [read_correctness(path, k) for path in paths] for name, paths in parsed.items()},
        groups,
        base_name=base.stem,
        k=k,
        n_boot=options.n_boot,
        confidence=options.confidence,
        seed=options.seed,
    )
    if json_out:
        files = {name: list(map(str, paths)) for name, paths in parsed.items()}
        resampled = "documents" if documents is not None else "mentions"
        print_json(
            {
                "base_file": str(base),
                "setting_files": files,
                "resampled": resampled,
                **result.to_dict(),
            }
        )
        return
    over = f"{result.groups} documents" if documents is not None else "mentions"
    console = Console()
    console.print(_select_table(result))
    console.print(
        f"best on all mentions: {result.naive_choice}, Δ {100 * result.naive_delta:+.1f} "
        "(chosen and scored on the same mentions: optimistic)"
    )
    console.print(
        f"cross-fitted over {over}: acc {100 * result.accuracy:.1f}, "
        f"Δ {100 * result.delta:+.1f} [{100 * result.ci_low:+.1f}, {100 * result.ci_high:+.1f}] "
        f"({100 * result.confidence:.0f}% cluster bootstrap, choice repeated in each of "
        f"{result.n_boot} draws), p = {result.bootstrap_p:.2g}"
    )
