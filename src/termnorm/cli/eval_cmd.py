"""``termnorm eval ...``: measure indexes, baselines and models on benchmarks.

``eval_app`` is the ``eval`` sub-app; this module adds ``eval normalize``. Another evaluator
adds its command from its own module, without touching this one (``@eval_app.command("mcsm")``
on a module-level function), plus its name in the import of ``cli/__init__.py``.
:mod:`termnorm.cli._output` prints metrics the same way (``--json`` flat, unprefixed).
Heavy imports stay inside the command functions.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from termnorm.cli._config_options import options_of, with_config_options
from termnorm.cli._output import json_ready, print_json
from termnorm.cli._strategy import spec_from_options, synonym_notice, with_spec_options
from termnorm.evaluation.metric_names import unprefixed
from termnorm.evaluation.options import NormalizationOptions
from termnorm.mentions.abbreviations import AbbreviationMode
from termnorm.mentions.mention import MentionFormat

if TYPE_CHECKING:
    from termnorm.search.candidate import Matcher
    from termnorm.search.spec import PipelineSpec

__all__ = ["eval_app", "ks_up_to", "register"]

eval_app = typer.Typer(
    name="eval",
    help="Measure indexes, lexical baselines and models on benchmark datasets.",
    no_args_is_help=True,
)

STANDARD_KS = (1, 3, 5, 10)
_NORMALIZE_EXAMPLES = """
Examples:

  termnorm eval normalize --index medic_idx ../shared/benchmarks/ncbi_disease/NCBIdevelopset_corpus.txt

  termnorm eval normalize --baseline tfidf --kg medic_kg NCBIdevelopset_corpus.txt --json

  termnorm eval normalize --zero-shot --model MODEL_DIR cadec/CADEC_0 psytar/fold_1

  termnorm eval normalize --index medic_idx NCBIdevelopset_corpus.txt --synonyms NCBItrainset_corpus.txt --strategy d-t+od-t

  termnorm eval normalize --index medic_idx NCBIdevelopset_corpus.txt --abbreviations none

  termnorm eval normalize --index medic_idx NCBIdevelopset_corpus.txt --synonyms NCBItrainset_corpus.txt --ranker rankers/ncbi-kar --rank-mode fused
"""


def ks_up_to(k: int) -> tuple[int, ...]:
    """The standard cut-offs 1, 3, 5, 10 up to ``k``, and ``k`` itself."""
    if k < 1:
        raise typer.BadParameter(f"-k must be at least 1, got {k}", param_hint="-k")
    return tuple(sorted({x for x in STANDARD_KS if x <= k} | {k}))


def _check_sources(paths: list[Path], job: NormalizationOptions) -> None:
    """``BadParameter`` unless ``job`` names one thing to score, with what it needs."""
    if job.zero_shot:
        if job.index is not None:
            raise typer.BadParameter("--zero-shot searches each fold's targets; drop --index")
        return
    if len(paths) != 1:
        raise typer.BadParameter("give one MENTIONS file (several only with --zero-shot)")
    if (job.index is None) == (job.baseline is None):
        raise typer.BadParameter("give either --index INDEX_DIR or --baseline KIND --kg KG_DIR")
    if job.baseline is not None and job.kg is None:
        raise typer.BadParameter("--baseline needs --kg KG_DIR (the KG to match against)")


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def normalization_table(metrics: dict[str, Any], ks: tuple[int, ...], title: str) -> Table:
    """Rows simple / composite (any, parts) / all; columns n, acc@k (%), MRR (%)."""
    table = Table(title=title)
    table.add_column("mentions")
    table.add_column("n", justify="right")
    for k in ks:
        table.add_column(f"acc@{k} %", justify="right")
    table.add_column("MRR %", justify="right")
    groups = [("simple", "", "n_simple"), ("composite (any)", "composite_", "n_composite")]
    groups += [("composite (parts)", "composite_parts_", "n_composite")]
    groups += [("all linkable", "all_", "")]
    for label, key, count in groups:
        if f"{key}mrr" not in metrics:
            continue
        n = metrics[count] if count else metrics["n_simple"] + metrics["n_composite"]
        rates = [_rate(metrics.get(f"{key}acc@{k}")) for k in ks]
        table.add_row(label, str(n), *rates, _rate(metrics[f"{key}mrr"]))
    table.caption = (
        f"unlinkable (not scored): {metrics['n_unlinkable']}   blank: {metrics['n_blank']}"
        f"   matcher errors: {metrics['n_failed']}"
    )
    return table


def _emit(
    metrics: dict[str, Any], ks: tuple[int, ...], json_out: bool, info: dict[str, Any]
) -> None:
    if json_out:
        head = {key: value for key, value in info.items() if key != "per_fold"}
        tail = {"per_fold": info["per_fold"]} if "per_fold" in info else {}
        print_json({**head, **metrics, **tail})
        return
    title = f"{info['matcher']} on {', '.join(info['datasets'])}"
    if "abbreviations" in info:
        title += f" (abbreviations: {info['abbreviations']})"
    if "per_fold" in info:
        title += f" (zero-shot, mean of {len(info['per_fold'])} folds)"
    Console().print(normalization_table(metrics, ks, title))
    if "multi_code_total" in metrics:
        Console().print(multi_code_table(metrics))


def multi_code_table(metrics: dict[str, Any]) -> Table:
    """``--multi``: exact code-set accuracy and implication-number accuracy by gold class."""
    table = Table("mentions", "n", "exact code set", "implication number", title="multi-code")
    n_all = metrics.get("multi_code_n_uni", 0) + metrics.get("multi_code_n_multi", 0)
    rows = [  # label, n, exact-set key, implication key
        ("one code", metrics.get("multi_code_n_uni"), "multi_code_uni", "implication_1"),
        (
            "several codes",
            metrics.get("multi_code_n_multi"),
            "multi_code_multi",
            "implication_multi",
        ),
        ("  2 codes", metrics.get("implication_n_2"), None, "implication_2"),
        ("  3+ codes", metrics.get("implication_n_3"), None, "implication_3"),
        ("all", n_all, "multi_code_total", "implication_total"),
    ]
    for label, n, code_set, implication in rows:
        shown = "" if n is None else str(int(n))
        code_rate = _rate(metrics.get(code_set)) if code_set else _rate(None)
        table.add_row(label, shown, code_rate, _rate(metrics.get(implication)))
    return table


EVAL_MULTI_HELP = (
    "Also score multi-code output (needs --ranker and an implication head): exact code-set "
    "accuracy of one-code, multi-code and all linkable mentions (multi_code_uni/multi/total) "
    "and the implication-number accuracy per class (implication_1/2/3, _total)."
)


_INDEX_ONLY = (
    "strategy",
    "synonyms",
    "min_score",
    "namespaces",
    "semantic_types",
    "excluded_types",
    "hybrid",
    "combiner",
)
_JOB_FIELDS = {field.name for field in dataclasses.fields(NormalizationOptions)}


@eval_app.command("normalize", epilog=_NORMALIZE_EXAMPLES)
@with_spec_options(
    exclude=("index", "model", "max_chars"),
    help={"mode": "term|concept vectors (with --index).", "multi": EVAL_MULTI_HELP},
)
@with_config_options(NormalizationOptions)
def normalize_cmd(
    mentions: list[Path] = typer.Argument(
        ..., help="Mention file or folder (with --zero-shot: one or more fold folders)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print flat JSON (acc@1, mrr, n, ...)."),
    **fields: Any,
) -> None:
    """acc@k and MRR of an index, a baseline or a model (zero-shot) on annotated mentions."""
    job = options_of(NormalizationOptions, fields)
    index = job.index
    options = {name: value for name, value in fields.items() if name not in _JOB_FIELDS}
    _check_sources(mentions, job)
    spec = spec_from_options(options, index=index, model=job.model if index is not None else None)
    if spec.ranker is not None and index is None:
        raise typer.BadParameter("--ranker reorders an index's candidates: give --index")
    if job.zero_shot and job.abbreviations is AbbreviationMode.AB3P:
        raise typer.BadParameter("--zero-shot folds carry no document text: drop --abbreviations")
    if index is None and any(options[name] not in (None, [], ()) for name in _INDEX_ONLY):
        raise typer.BadParameter(
            "--strategy, --synonyms, --min-score, --namespace, --type, --not-type, --hybrid and --combiner "
            "search an index: give --index"
        )
    ks = ks_up_to(job.k)
    run = _run_zero_shot if job.zero_shot else _run_single
    metrics, info = run(mentions, job, ks, spec)
    _emit(metrics, ks, json_out, info)


def _run_single(
    paths: list[Path], job: NormalizationOptions, ks: tuple[int, ...], spec: PipelineSpec
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Metrics and run facts of ``job`` on the one mention file ``paths[0]``."""
    from termnorm.evaluation.normalization import NormalizationEvaluator
    from termnorm.mentions import detect_format, read_mentions
    from termnorm.search.context import file_expansions

    path, baseline, kg = paths[0], job.baseline, job.kg
    fmt = job.fmt or detect_format(path)
    mentions = read_mentions(path, fmt)
    abbr_mode, expansions = file_expansions(path, fmt, mentions, job.abbreviations)
    evaluator = NormalizationEvaluator(
        mentions, ks, composite_rule=job.composite_rule, expansions=expansions
    )
    recorder = None
    matcher: Matcher
    if spec.index is not None:
        from termnorm.search.build import build

        matcher = build(spec, notice=synonym_notice)
        if spec.multi:
            from termnorm.evaluation.multi_code import RowRecorder

            matcher = recorder = RowRecorder(matcher)
    else:
        from termnorm.kg.graph import KnowledgeGraph
        from termnorm.search.lexical import make_lexical_matcher

        assert baseline is not None and kg is not None  # _check_sources
        matcher = make_lexical_matcher(baseline, KnowledgeGraph.load(kg))
    report = evaluator.evaluate(matcher)
    if job.predictions is not None:
        report.write_predictions(job.predictions)
    info = {"datasets": [str(path)], "format": fmt.value, "matcher": matcher.name, "ks": list(ks)}
    info["abbreviations"] = abbr_mode.value
    metrics = unprefixed(report.metrics, evaluator.prefix)
    if recorder is not None:
        metrics.update(_multi_code(report, recorder))
    return json_ready(metrics), info


def _multi_code(report: Any, recorder: Any) -> dict[str, float]:
    """Exact code-set accuracy (uni / multi / total) and implication-number accuracy of the
    linkable, non-blank mentions, each scored on the text its ranking came from."""
    from termnorm.evaluation.multi_code import multi_code_metrics
    from termnorm.evaluation.normalization import matcher_keys
    from termnorm.mentions import MentionKind

    scored = [
        (r.query or r.mention.text, r.mention.gold_ids)
        for r in report.results
        if r.mention.kind is not MentionKind.UNLINKABLE and r.mention.text.strip()
    ]
    return multi_code_metrics(scored, recorder.rows, matcher_keys(recorder))


def _run_zero_shot(
    folds: list[Path], job: NormalizationOptions, ks: tuple[int, ...], spec: PipelineSpec
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Metrics (mean over folds) and run facts of ``job`` on the zero-shot ``folds``."""
    from termnorm.evaluation.zero_shot import ZeroShotEvaluator

    evaluator = ZeroShotEvaluator(folds, ks)
    baseline, model = job.baseline, job.model
    if baseline is not None:
        from termnorm.search.lexical import make_lexical_matcher

        kind = baseline
        report = evaluator.evaluate(lambda kg: make_lexical_matcher(kind, kg))
        matcher_name = kind.value
    else:
        from termnorm.encoders import TermEncoder

        encoder = TermEncoder.load(
            model, pooling=job.pooling, runtime=spec.runtime, threads=spec.threads
        )
        report = evaluator.evaluate(encoder)
        matcher_name = f"embedding ({model or 'default model'})"
    if job.predictions is not None:
        report.write_predictions(job.predictions)
    prefix = f"{evaluator.name}_"
    info: dict[str, Any] = {
        "datasets": [str(f) for f in folds],
        "format": MentionFormat.TSV.value,
        "matcher": matcher_name,
        "protocol": "zero-shot",
        "ks": list(ks),
        "per_fold": {
            label: json_ready(unprefixed(r.metrics, prefix)) for label, r in report.folds.items()
        },
    }
    return json_ready(unprefixed(report.metrics, prefix)), info


def register(app: typer.Typer) -> None:
    """Attach the ``eval`` sub-app (with every command added to ``eval_app``) to ``app``."""
    app.add_typer(eval_app, name="eval")
