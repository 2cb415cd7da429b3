"""``termnorm eval mcsm|relation|clustering|relatedness|linkpred``: embedding benchmarks.

The commands are added to the ``eval`` sub-app of :mod:`termnorm.cli.eval_cmd` when this
module is imported. ``--model`` defaults to the built-in
default model; ``--json`` prints flat metrics with plain names (``mcsm_mean``, ``accuracy``,
``f1``, ``spearman``, ``mrr``, ...); ``--threads`` sets torch's CPU threads. Heavy imports
stay inside the command functions. The flags besides ``--kg`` and ``--json`` are generated
from the evaluators' options dataclasses (:mod:`termnorm.evaluation.options`).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from termnorm.cli._config_options import options_of, with_config_options
from termnorm.cli._options import use_threads
from termnorm.cli._output import json_ready, print_json
from termnorm.cli.eval_cmd import eval_app
from termnorm.evaluation.options import (
    ClusteringOptions,
    EncoderOptions,
    LinkPredictionOptions,
    MCSMOptions,
    RelationOptions,
)
from termnorm.registry import import_path

if TYPE_CHECKING:
    from termnorm.encoders import TermEncoder
    from termnorm.kg import KnowledgeGraph

__all__: list[str] = []  # the commands are on eval_app

_COUNTS = {"concepts", "pairs", "evaluated", "labels", "train", "test", "triplets", "dropped"}
_COUNTS |= {"test_pairs", "test_positive_pairs", "k", "skipped_concepts"}


def _kg_option(what: str) -> Any:
    """``--kg`` (required); ``what`` says what the benchmark reads from it."""
    return typer.Option(..., "--kg", help=f"KG folder (from 'termnorm kg build'). {what}")


def _json_option() -> Any:
    return typer.Option(False, "--json", help="Print flat JSON with plain metric names.")


def _encoder_options(fields: dict[str, Any]) -> EncoderOptions:
    """The command's encoder options, its torch threads set."""
    options = options_of(EncoderOptions, fields)
    use_threads(options.threads)
    return options


def _encoder(model: Path | None, pooling: str | None) -> TermEncoder:
    from termnorm.encoders import TermEncoder

    return TermEncoder.load(model, pooling=pooling)


def _kg(path: Path) -> KnowledgeGraph:
    from termnorm.kg import KnowledgeGraph

    return KnowledgeGraph.load(path)


_CHOICES = {"vectors": ("name", "mean"), "mode": ("feature", "fine-tune")}


def _evaluate(
    kg: Path, fields: dict[str, Any], options_cls: type[Any], target: str
) -> tuple[Any, Any, dict[str, Any]]:
    """The evaluator ``target`` (``"module:Class"``) built on ``kg`` with the ``options_cls``
    settings in ``fields`` (a value outside ``_CHOICES`` is a usage error), its result on the
    command's encoder, and the info a report starts with (``kg``, ``model``)."""
    encoder, options = _encoder_options(fields), options_of(options_cls, fields)
    for name, allowed in _CHOICES.items():
        if getattr(options, name, allowed[0]) not in allowed:
            hint = f"--{name}"
            raise typer.BadParameter(f"must be one of {', '.join(allowed)}", param_hint=hint)
    evaluator = import_path(target)(_kg(kg), **asdict(options))
    result = evaluator.evaluate(_encoder(encoder.model, encoder.pooling))
    return evaluator, result, {"kg": str(kg), "model": str(encoder.model or "default")}


def _emit(metrics: dict[str, Any], json_out: bool, title: str, info: dict[str, Any]) -> None:
    """JSON (info first, counts as integers) or a metric/value table."""
    plain = json_ready({k: v for k, v in metrics.items() if isinstance(v, float | int)})
    plain = {k: int(v) if k in _COUNTS and v is not None else v for k, v in plain.items()}
    extra = {k: v for k, v in metrics.items() if not isinstance(v, float | int)}
    if json_out:
        print_json({**info, **plain, **extra})
        return
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in plain.items():
        shown = "-" if value is None else f"{value:.4f}" if isinstance(value, float) else value
        table.add_row(key, str(shown))
    Console().print(table)


@eval_app.command(
    "mcsm",
    epilog="Examples:\n\n  termnorm eval mcsm --kg hpo_kg\n\n"
    "  termnorm eval mcsm --kg umls_kg --model MODEL_DIR -k 40 --vectors mean --json",
)
@with_config_options(MCSMOptions, EncoderOptions)
def mcsm_cmd(
    kg: Path = _kg_option("Concepts need semantic types."),
    json_out: bool = _json_option(),
    **fields: Any,
) -> None:
    """MCSM per semantic type of the KG and their mean (with standard deviations)."""
    _, result, info = _evaluate(kg, fields, MCSMOptions, "termnorm.evaluation.mcsm:MCSMEvaluator")
    if json_out:
        print_json({**info, **result.to_dict()})
        return
    table = Table(title=f"MCSM (k={result.k}, max {result.to_dict()['max']:.2f}) on {kg}")
    for column in ("semantic type", "concepts", "MCSM", "std"):
        table.add_column(column, justify="left" if column == "semantic type" else "right")
    for t in result.types:
        table.add_row(t.semantic_type, str(t.concepts), f"{t.mean:.2f}", f"{t.std:.2f}")
    table.add_section()
    table.add_row(
        "mean over types", str(result.concepts), f"{result.mean:.2f}", f"{result.mean_std:.2f}"
    )
    Console().print(table)


@eval_app.command(
    "relation",
    epilog="Examples:\n\n  termnorm eval relation --kg hpo_kg --max-triplets 5000\n\n"
    "  termnorm eval relation --kg kg --model MODEL_DIR --mode fine-tune --epochs 5 --json",
)
@with_config_options(RelationOptions, EncoderOptions)
def relation_cmd(
    kg: Path = _kg_option("Its relations are the labels."),
    json_out: bool = _json_option(),
    **fields: Any,
) -> None:
    """Relation classification softmax(W (e_h; e_t) + b): accuracy on held-out triplets."""
    target = "termnorm.evaluation.relation_classification:RelationClassificationEvaluator"
    evaluator, result, info = _evaluate(kg, fields, RelationOptions, target)
    mode = info["mode"] = evaluator.mode.value
    _emit(result.to_dict(), json_out, f"relation classification ({mode}) on {kg}", info)


@eval_app.command(
    "clustering",
    epilog="Examples:\n\n  termnorm eval clustering --kg hpo_kg\n\n"
    "  termnorm eval clustering --kg kg --model MODEL_DIR --max-concepts 2000 --json",
)
@with_config_options(ClusteringOptions, EncoderOptions)
def clustering_cmd(
    kg: Path = _kg_option("Synonyms = terms of a concept."),
    json_out: bool = _json_option(),
    **fields: Any,
) -> None:
    """Synonym pairs by cosine ≥ θ: θ tuned on some concepts, P/R/F1 on the others."""
    target = "termnorm.evaluation.clustering:ClusteringEvaluator"
    evaluator, result, info = _evaluate(kg, fields, ClusteringOptions, target)
    info["tune_concepts"] = len(evaluator.tune_concepts)
    info["test_concepts"] = len(evaluator.test_concepts)
    _emit(result.metrics(), json_out, f"clustering pairs on {kg}", info)


@eval_app.command(
    "relatedness",
    epilog="Examples:\n\n  termnorm eval relatedness ../shared/benchmarks/mayosrs/MiniMayoSRS.csv\n\n"
    "  termnorm eval relatedness umnsrs/umnsrs-sim.txt --model MODEL_DIR --json",
)
@with_config_options(EncoderOptions)
def relatedness_cmd(
    pairs: Path = typer.Argument(..., help="Pair file: MayoSRS CSV or term1<TAB>term2<TAB>score."),
    json_out: bool = _json_option(),
    **fields: Any,
) -> None:
    """Spearman and Pearson between cosine and human scores, with coverage."""
    encoder = _encoder_options(fields)
    from termnorm.evaluation.relatedness import RelatednessEvaluator

    evaluator = RelatednessEvaluator(pairs)
    result = evaluator.evaluate(_encoder(encoder.model, encoder.pooling))
    info = {"pairs_file": str(pairs), "model": str(encoder.model or "default")}
    details = result.to_dict()
    if not json_out and result.skipped:
        typer.echo(
            f"{len(result.skipped)} pair(s) could not be embedded: {details['skipped']}", err=True
        )
    _emit(details, json_out, f"relatedness on {pairs}", info)


@eval_app.command(
    "linkpred",
    epilog="Examples:\n\n  termnorm eval linkpred --kg hpo_kg --model MODEL_DIR\n\n"
    "  termnorm eval linkpred --kg kg --model MODEL_DIR --triplets kg_train/heldout_relations.parquet"
    "\n\n  termnorm eval linkpred --kg kg_train --triplets kg_train/heldout_relations.parquet "
    "--model models/coder --kge kge/transe --kge kge/rotate",
)
@with_config_options(LinkPredictionOptions, EncoderOptions, exclude={"model"})
def linkpred_cmd(
    kg: Path = _kg_option("Candidates and known triplets."),
    json_out: bool = _json_option(),
    **fields: Any,
) -> None:
    """hits@1/3/10, MR and MRR of ranking tails by a model's relation head S_rel; with several
    models or any --kge, one table of all of them on the same triplets and candidates."""
    pooling, options = _encoder_options(fields).pooling, options_of(LinkPredictionOptions, fields)
    from termnorm.evaluation.link_prediction import LinkPredictionEvaluator
    from termnorm.kg.split import load_heldout

    models, kges = list(options.models or []), list(options.kge or [])
    if not models and not kges:
        raise typer.BadParameter("give --model and/or --kge", param_hint="--model")
    graph = _kg(kg)
    evaluator = LinkPredictionEvaluator(
        graph,
        filtered=not options.raw,
        test_fraction=options.test_fraction,
        max_triplets=options.max_triplets,
        triplets=None if options.triplets is None else load_heldout(options.triplets),
        seed=options.seed,
    )
    if len(models) == 1 and not kges:
        metrics = evaluator.evaluate(_encoder(models[0], pooling))
        info = {"kg": str(kg), "model": str(models[0]), "filtered": not options.raw}
        _emit(dict(metrics), json_out, f"link prediction on {kg}", info)
        return
    filtered = not options.raw
    _compare_linkpred(graph, kg, models, kges, pooling, evaluator.triplets, filtered, json_out)


def _compare_linkpred(
    graph: KnowledgeGraph,
    kg: Path,
    models: list[Path],
    kges: list[Path],
    pooling: str | None,
    triplets: Any,
    filtered: bool,
    json_out: bool,
) -> None:
    """One table: every model and KGE ranked on the same triplets and candidates."""
    from termnorm.evaluation.linkpred_compare import (
        EncoderTailScorer,
        TailScorer,
        compare_link_prediction,
    )
    from termnorm.kge import KGETailScorer

    scorers: dict[str, TailScorer] = {}
    for path in kges:
        scorers[f"KGE {path}"] = KGETailScorer(path, graph)
    for path in models:
        scorers[f"encoder {path}"] = EncoderTailScorer(_encoder(path, pooling), graph)
    result = compare_link_prediction(graph, scorers, triplets, filtered=filtered)
    if json_out:
        ready = {name: json_ready(m) for name, m in result.metrics.items()}
        print_json({"kg": str(kg), **result.to_dict(), "models": ready})
        return
    table = Table(
        title=f"link prediction on {kg}: {result.triplets} triplets "
        f"({result.dropped} dropped), {result.candidates} candidate tails, "
        f"{'filtered' if filtered else 'raw'}"
    )
    table.add_column("model")
    for column in ("hits@1", "hits@3", "hits@10", "MR", "MRR"):
        table.add_column(column, justify="right")
    for name, m in result.metrics.items():
        table.add_row(
            name,
            *(f"{m[k]:.3f}" for k in ("hits@1", "hits@3", "hits@10")),
            f"{m['mr']:.1f}",
            f"{m['mrr']:.3f}",
        )
    Console().print(table)
