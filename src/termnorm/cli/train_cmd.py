"""``termnorm train``: knowledge-infused contrastive training (CODER) of a term encoder.

Every :class:`~termnorm.training.TrainConfig` field is an option, generated from the field
(:mod:`termnorm.cli._config_options`: its default and help text live in the config only),
plus ``--config FILE`` (a JSON file of fields; options given on the command line override
it) and ``--resume``; ``--help`` shows the shared options, ``--loss NAME --help`` those of
objective NAME (:mod:`termnorm.cli._objective_command`). The command parses them into a config and calls :func:`termnorm.train`,
which is what Python users call. Multi-process runs go through torchrun:
``torchrun --nproc_per_node N --no-python termnorm train ...``.
"""

from __future__ import annotations

import inspect
import json
import logging
from pathlib import Path
from typing import Any

import typer

from termnorm.cli._config_options import with_options
from termnorm.cli._objective_command import ObjectiveCommand
from termnorm.training.config import TrainConfig

logger = logging.getLogger(__name__)

__all__ = ["register"]

_CONTEXT = inspect.Parameter(
    "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
)


def config_from_options(
    ctx: typer.Context, given: dict[str, Any], config_json: Path | None
) -> TrainConfig:
    """The run's config: the ``--config`` file's fields, then every option given on the
    command line (without a file, every option, defaults included)."""
    values: dict[str, Any] = {}
    if config_json is not None:
        values.update(json.loads(config_json.read_text(encoding="utf-8")))
    for name, value in given.items():
        source = ctx.get_parameter_source(name)  # typer's own click: compare by name
        if config_json is None or source is None or source.name != "DEFAULT":
            values[name] = value
    return TrainConfig.from_dict(values, config_json)


def train(ctx: typer.Context, resume: bool, config_json: str | None, **given: Any) -> None:
    """Train an encoder on a KG (and your annotated mentions); write a sentence-transformers folder.

    The recipe that holds up (docs/training.md): your annotated mentions as domain synonyms
    (--train-data od --mentions FILE), 3,000 steps, then WiSE-FT (--wise-alpha 0.5). Without
    annotated mentions, training on the KG alone does not lift the base model zero-shot: use
    the base model with --synonyms at search time instead. A new language on a KG with names
    in several languages: --loss distill (each name learns its English name's vector from
    the frozen base, so English stays where it was).

    \b
    Examples:
      termnorm train --kg kg/medic_hpo --out models/od-wise --train-data od --mentions ../shared/benchmarks/ncbi_disease/NCBItrainset_corpus.txt --steps 3000 --wise-alpha 0.5
      termnorm train --kg kg/hpo --out models/coder --loss coder --steps 3000   # research: CODER's objective
      termnorm train --kg kg/icd10who --out models/distill --loss distill --steps 600 --k 32 --lr 1e-4 --max-length 32 --no-freeze-embeddings --freeze-layers 0 --lang-balanced
    """
    from termnorm.api import train as run

    config_path = None if config_json is None else Path(config_json)
    result = run(config_from_options(ctx, given, config_path), resume=resume)
    if result.interrupted:
        typer.echo(
            f"interrupted at step {result.steps}: checkpoint saved in {result.out}; "
            "rerun with --resume to continue",
            err=True,
        )
        raise typer.Exit(128 + (result.signal or 2))
    if result.rank == 0:
        summary = {"out": str(result.out), "steps": result.steps, **result.final_metrics}
        typer.echo(json.dumps(summary, indent=2))


def register(app: typer.Typer) -> None:
    """Attach ``train`` to ``app`` (its options come from the objectives' registry when it
    parses: :class:`ObjectiveCommand`)."""
    command = with_options(train, [_CONTEXT], [])
    app.command("train", cls=ObjectiveCommand, context_settings={"max_content_width": 100})(command)
