"""``termnorm eval annotate GOLD [--index …] [spec options] [--json]``: concepts found in the
gold's documents, scored against its mentions, with ``termnorm annotate``'s defaults (the
built-in HPO index without ``--index``; HPO's phenotypes as findings, ``--findings``: its
modifiers qualify them, its diseases are not searched).

Reads the documents (:func:`termnorm.mentions.read_documents`) and the gold mentions with
their offsets (:func:`termnorm.mentions.read_mentions`; PubTator, GSC+, PhenoBERT), annotates
every document with the :class:`~termnorm.annotate.pipeline.Annotator` of the spec options
(the dictionary detector over the index's terms and ``--synonyms`` and/or the span tagger of
``--ner``, as ``--detectors`` says; ``--min-score`` as the cut), and prints precision, recall and F1 at the four levels of
:mod:`termnorm.evaluation.annotation`: mention strict, mention lenient, document, span, plus
the gold mentions not found and found with a wrong concept. A document the annotator refuses
(binary, over its size cap) is named on stderr, counted (``n_failed_documents``) and its gold
mentions count as missed. ``--json`` prints the same as one flat object.
A predicted concept hits a gold ID that is one of its alternative IDs in the index (HPO's
``alt_id`` lines, MEDIC's alternative MeSH/OMIM IDs), as ``termnorm eval`` scores normalization.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from termnorm.annotate.spec import AnnotateSpec
from termnorm.cli._output import json_ready, print_json
from termnorm.cli._strategy import with_spec_options
from termnorm.cli.annotate_cmd import annotate_spec_from_options
from termnorm.cli.eval_cmd import eval_app
from termnorm.evaluation.metric_names import unprefixed
from termnorm.mentions.mention import MentionFormat

if TYPE_CHECKING:
    from termnorm.annotate.pipeline import Annotator
    from termnorm.evaluation.annotation import AnnotationLike

__all__ = ["annotate_cmd", "score_annotations"]

_EXAMPLES = """
Examples:

  termnorm eval annotate ../shared/benchmarks/hpo_gscplus/GSCplus_dev_gold.tsv

  termnorm eval annotate NCBIdevelopset_corpus.txt --index idx/medic --min-score 0.8 --json
"""
LEVEL_LABELS = {
    "mention_strict": "mention, strict (span + concept)",
    "mention_lenient": "mention, lenient (overlap + concept)",
    "document": "document (concept sets)",
    "span": "span (detector alone)",
}


def score_annotations(
    gold: Path, fmt: MentionFormat | None, annotator: Annotator
) -> dict[str, float]:
    """Annotate the documents of ``gold`` and score them (metrics prefixed ``annotate_``,
    plus ``annotate_n_documents`` and ``annotate_n_failed_documents``), a concept's
    alternative IDs read from the annotator's index."""
    from termnorm.evaluation.annotation import AnnotationEvaluator
    from termnorm.mentions import read_documents, read_mentions

    documents = read_documents(gold, fmt)
    evaluator = AnnotationEvaluator(
        read_mentions(gold, fmt), doc_ids=documents, alt_ids=annotator.memo.alt_ids
    )
    found: list[AnnotationLike] = []
    failed = 0
    for result in annotator.annotate_many(documents.items()):
        if result.error is not None:
            failed += 1
            typer.echo(f"document {result.doc_id} not annotated: {result.error}", err=True)
        found.extend(result.annotations)
    metrics = evaluator(found)
    metrics[f"{evaluator.prefix}n_documents"] = float(len(documents))
    metrics[f"{evaluator.prefix}n_failed_documents"] = float(failed)
    return metrics


@eval_app.command("annotate", epilog=_EXAMPLES)
@with_spec_options(settings=[AnnotateSpec], exclude=("index", "search"))
def annotate_cmd(
    gold: Path = typer.Argument(..., help="Annotated corpus with document text and offsets."),
    index: Path | None = typer.Option(
        None,
        "--index",
        help="Index folder whose concepts to find (default: the built-in HPO index, as "
        "termnorm annotate).",
    ),
    fmt: MentionFormat | None = typer.Option(
        None, "--format", help="pubtator|gscplus|phenobert (detected when omitted)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one flat JSON object."),
    **options: Any,
) -> None:
    """Precision, recall and F1 of the annotations of GOLD's documents, at four levels."""
    from termnorm.annotate.detectors import build_annotator
    from termnorm.cli.normalize_cmd import _announce_default_index

    spec = annotate_spec_from_options(options, index=index)
    if index is None:
        _announce_default_index()
    metrics = unprefixed(score_annotations(gold, fmt, build_annotator(spec)), "annotate_")
    shown_index = "the default index" if index is None else str(index)
    if json_out:
        shown = {
            "gold": str(gold),
            "index": index and str(index),
            "ner": spec.ner and str(spec.ner),
        }
        record = spec.record()
        print_json(
            {**shown, "detectors": record["detectors"], "findings": record["findings"]}
            | json_ready(metrics)
        )
        return
    Console().print(_table(metrics, f"annotations of {gold.name} with {shown_index}"))


def _table(metrics: dict[str, float], title: str) -> Table:
    table = Table("level", "precision", "recall", "F1", "tp", "fp", "fn", title=title)
    for level, label in LEVEL_LABELS.items():
        table.add_row(
            label,
            *(f"{metrics[f'{level}_{m}']:.3f}" for m in ("precision", "recall", "f1")),
            *(f"{metrics[f'{level}_{c}']:.0f}" for c in ("tp", "fp", "fn")),
        )
    table.caption = (
        f"gold mentions not found: {metrics['n_missed_span']:.0f}; found with a wrong "
        f"concept: {metrics['n_wrong_concept']:.0f}; documents: {metrics['n_documents']:.0f} "
        f"({metrics['n_failed_documents']:.0f} refused)"
    )
    return table
