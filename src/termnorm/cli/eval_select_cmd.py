"""``termnorm eval select BASE --setting NAME=FILE[,FILE…] …``: pick a setting, honestly.

Given prediction files of several settings (an interpolation weight, a step count, a recipe;
each with one or more seeds) and of a baseline on the same mentions, prints each setting's
pooled acc@k and Δ, the naive pick (best on all mentions, scored on them: optimistic), and the
cross-fitted Δ: every document scored by the setting that is best on the other documents,
with a cluster-bootstrap interval that repeats the choice in each draw
(:mod:`termnorm.lab.selection`). List the default setting first: ties go to it.
Unreadable or mismatched files end with one ``error:`` line and exit 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from termnorm.cli._output import print_json
from termnorm.cli.eval_cmd import eval_app
from termnorm.cli.eval_compare_cmd import (
    BOOTSTRAP_OPTION,
    CONFIDENCE_OPTION,
    JSON_OPTION,
    K_OPTION,
    SEED_OPTION,
    UNIT_OPTION,
    ResampleUnit,
    resample_groups,
)

if TYPE_CHECKING:
    from termnorm.lab.selection import CrossFitSelection

__all__: list[str] = []  # the commands are on eval_app

_EXAMPLES = """
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


def _table(result: CrossFitSelection) -> Table:
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


@eval_app.command("select", epilog=_EXAMPLES)
def select_cmd(
    base: Path = typer.Argument(..., help="Predictions of the baseline (JSONL)."),
    setting: list[str] = typer.Option(
        ...,
        "--setting",
        help="NAME=FILE[,FILE…]: one setting and its runs' predictions; give two or more.",
    ),
    k: int = K_OPTION,
    n_boot: int = BOOTSTRAP_OPTION,
    confidence: float = CONFIDENCE_OPTION,
    seed: int = SEED_OPTION,
    unit: ResampleUnit = UNIT_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Cross-fitted choice among settings: what picking the best on dev is really worth."""
    from termnorm.evaluation.predictions import read_correctness
    from termnorm.lab.selection import cross_fitted_selection

    parsed = dict(_parse_setting(value) for value in setting)
    if len(parsed) != len(setting):
        raise typer.BadParameter("give each setting name once", param_hint="--setting")
    baseline = read_correctness(base, k)
    documents = resample_groups(unit, base)
    groups = documents if documents is not None else {key: repr(key) for key in baseline}
    result = cross_fitted_selection(
        baseline,
        {name: [read_correctness(path, k) for path in paths] for name, paths in parsed.items()},
        groups,
        base_name=base.stem,
        k=k,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
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
    console.print(_table(result))
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
