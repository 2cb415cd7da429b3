"""``termnorm rank train|hybrid|combine``: train a cross-encoder ranker on the candidates an
index recalls (or on a mapping project's decisions), fit hybrid recall and the combiner.

``rank train``'s options are generated from :class:`~termnorm.search.rank.RankTrainSpec`
(defaults and help live there only, :mod:`termnorm.cli._config_options`). Registering is
cheap: torch, pandas and the search code load when a command runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from termnorm.cli._config_options import PlainHelpCommand, with_config_options
from termnorm.cli._options import RUNTIME_HELP, db_option, overwrite_option
from termnorm.encoders.runtime import RUNTIME_HELP as PLAIN_RUNTIME_HELP
from termnorm.search.stages.fit_spec import RANKER_SETTINGS, SYNONYMS_HELP, TrainingDataSpec
from termnorm.search.stages.ranker.train_spec import RankTrainSpec

__all__ = ["register"]

TRAIN_HELP = """Train a ranker (keyword-attentive cross-encoder, or plain with --plain) on the candidates that the index recalls for annotated training mentions, with the same search configuration as at inference (strategy, domain synonyms, abbreviations from the documents).

When a --synonyms file is also a --mentions file, documents are cross-fitted (--folds): a mention is searched without its own document's synonyms, so it never finds its own entry. Each query's top --k-c candidates become pairs (mention; matched synonym and name) labelled 1 for a gold concept, else 0, trained list-wise (softmax over a query's candidates; --loss pointwise: the paper's BCE). --holdout (0.2) keeps a share of the documents out of training; the learned combiner is then fitted on their candidates with the ranker's scores and stored in the folder, and --ranker orders by its probability (--rank-mode learned). The ranker folder has a card naming the index, recall model, strategy, k_c and keyword file; use it with termnorm normalize --ranker and termnorm eval normalize --ranker. A plain ranker's folder is also a sentence-transformers CrossEncoder folder (sentence-transformers 6 or later).

--project PROJECT trains on a mapping project's review decisions instead: each approved or picked row is a training mention of its concept, its candidates recalled afresh, the project's approved exact mappings cross-fitted as domain synonyms (without --strategy the recall is the project's: its spec's strategy and sieve threshold). Python: termnorm.search.rank.train_ranker(RankTrainSpec(...), out) and termnorm.projects.train_project_ranker(project, spec, out).

Examples:

  termnorm rank train --index idx/medic --mentions NCBItrainset_corpus.txt --synonyms NCBItrainset_corpus.txt --strategy d-t+od-t --out rankers/ncbi-kar

  termnorm rank train --index idx/medic --mentions NCBItrainset_corpus.txt --plain --epochs 1 --out rankers/ncbi-plain

  termnorm rank train --index idx/icd9 --mentions procs.tsv --keywords my_keywords.tsv --out rankers/procs

  termnorm rank train --index idx/loinc --project labs --out rankers/labs
"""


HYBRID_FIT_HELP = """Fit hybrid recall (dense search + char 3-gram TF-IDF, BioSyn) on annotated training mentions and write its card (JSON): the weight w of h = w*dense cosine + (1-w)*TF-IDF cosine with the best training acc@1, the candidates taken from each side, the index and strategy.

Training mentions are searched cross-fitted, as in rank train (a --synonyms file that is also a --mentions file is split by document into --folds). Use the card with termnorm normalize --hybrid CARD and termnorm eval normalize --hybrid CARD.

Examples:

  termnorm rank hybrid --index idx/medic --mentions NCBItrainset_corpus.txt --synonyms NCBItrainset_corpus.txt --out hybrid/ncbi.json
"""


COMBINE_HELP = """Fit the learned combiner: a logistic regression giving the probability that a recalled candidate is correct, from the recall score, its gap to the top, the rank, the match source, char 3-gram TF-IDF, token overlap, exact match and (with --ranker) the ranker logit. Fitted on cross-fitted training candidates, as rank train recalls them; writes a JSON card.

Use it with termnorm normalize --combiner CARD and termnorm eval normalize --combiner CARD (the same --strategy, --synonyms and --hybrid as here); --min-score is then a probability.

Examples:

  termnorm rank combine --index idx/medic --mentions NCBItrainset_corpus.txt --synonyms NCBItrainset_corpus.txt --out combiners/ncbi.json
"""


def register(app: typer.Typer) -> None:
    """Attach the ``rank`` group (``train``, ``hybrid``, ``combine``) to ``app``."""
    rank_app = typer.Typer(
        help="Train rankers that reorder recalled candidates.", no_args_is_help=True
    )
    app.add_typer(rank_app, name="rank")
    rank_app.command("hybrid", help=HYBRID_FIT_HELP)(hybrid)
    rank_app.command("combine", help=COMBINE_HELP)(combine)
    rank_app.command("train", help=TRAIN_HELP, cls=PlainHelpCommand)(train)  # long flags wrap


_CARD_OUT = typer.Option(..., "--out", help="Card (JSON file) to write.")
_JSON = typer.Option(False, "--json", help="Print the card as JSON.")
_HELP = {"runtime": RUNTIME_HELP, "synonyms": SYNONYMS_HELP}
"""Help texts of the recall's options where a fit's differ from ``normalize``'s."""
_PLAIN_HELP = {**_HELP, "runtime": PLAIN_RUNTIME_HELP}
""":data:`_HELP` for ``rank train``, whose help click prints as it is (no Rich escapes)."""


def _spec_values(given: dict[str, Any]) -> dict[str, Any]:
    """Option values as spec fields (repeatable options' lists as tuples); a fit without
    training mentions is refused."""
    if not given["mentions"]:
        raise typer.BadParameter("give the annotated training mentions (--mentions FILE)")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in given.items()}


def _fit_card(
    out: Path, overwrite: bool, json_out: bool, fit: Callable[[], dict[str, Any]], line: str
) -> None:
    """Write the card ``fit()`` makes (an existing ``out`` only with ``--overwrite``) and
    print it, or ``line`` filled with the card's metrics."""
    if out.exists() and not overwrite:
        raise typer.BadParameter(f"{out} exists: give --overwrite to replace it")
    card = fit()
    m = card["metrics"]
    typer.echo(json.dumps(card, indent=2) if json_out else line.format(out=out, c=card, m=m))


@with_config_options(
    TrainingDataSpec, exclude=(*RANKER_SETTINGS, "combiner", "hybrid", "k_c"), help=_HELP
)
def hybrid(
    k_dense: int = typer.Option(20, "--k-dense", min=1, help="Candidates of the dense side."),
    k_sparse: int = typer.Option(20, "--k-sparse", min=1, help="Candidates of the TF-IDF side."),
    out: Path = _CARD_OUT,
    overwrite: bool = overwrite_option(),
    json_out: bool = _JSON,
    **given: Any,
) -> None:
    """``termnorm rank hybrid``: :func:`~termnorm.search.rank.fit_hybrid` of the options."""
    from termnorm.search.stages.hybrid.fit import HybridFitSpec, fit_hybrid

    line = (
        "wrote {out}: w = {c[weight]:.2f} over {m[queries]} training queries, train acc@1 "
        "{m[train_acc_at_1]:.1%} (dense alone {m[train_acc_at_1_dense]:.1%}), a gold "
        "candidate for {m[train_candidates_with_gold]:.1%}"
    )
    spec = HybridFitSpec(**_spec_values(given), k_dense=k_dense, k_sparse=k_sparse)
    _fit_card(out, overwrite, json_out, lambda: fit_hybrid(spec, out), line)


@with_config_options(
    TrainingDataSpec,
    exclude=(*RANKER_SETTINGS[1:], "combiner"),
    help={**_HELP, "ranker": "Ranker folder whose logit is a feature."},
)
def combine(
    out: Path = _CARD_OUT,
    overwrite: bool = overwrite_option(),
    json_out: bool = _JSON,
    **given: Any,
) -> None:
    """``termnorm rank combine``: :func:`~termnorm.search.rank.fit_combiner_card` of the
    options (``--hybrid``: the recall of a hybrid card, ``--k-c`` candidates per mention)."""
    from termnorm.search.stages.combiner.fit import CombinerFitSpec, fit_combiner_card

    line = (
        "wrote {out}: {m[rows]} candidates of {m[queries]} training queries, train acc@1 "
        "{m[train_acc_at_1]:.1%} (recall {m[train_acc_at_1_recall]:.1%}), top-1 ECE "
        "{m[train_ece_top1]:.3f}"
    )
    spec = CombinerFitSpec(**_spec_values(given))
    _fit_card(out, overwrite, json_out, lambda: fit_combiner_card(spec, out), line)


@with_config_options(
    RankTrainSpec, exclude=(*RANKER_SETTINGS, "combiner", "model"), help=_PLAIN_HELP
)
def train(
    out: Path = typer.Option(..., "--out", help="Ranker folder to write."),
    project: str | None = typer.Option(
        None,
        "--project",
        help="Train on this mapping project's review decisions (approved and picked rows) "
        "instead of --mentions.",
    ),
    db: str | None = db_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = _JSON,
    **given: Any,
) -> None:
    """``termnorm rank train``: the options are :class:`RankTrainSpec`'s fields; the spec
    goes to :func:`~termnorm.search.rank.train_ranker` (or, with ``--project``,
    :func:`~termnorm.projects.train_project_ranker`)."""
    from termnorm._artifacts import InputPaths, prepare_output
    from termnorm.search.rank import train_ranker
    from termnorm.search.stages.ranker.ranker import CARD_NAME

    spec = RankTrainSpec.from_options(**given)
    if project is None and not spec.mentions:
        raise typer.BadParameter("give training mentions (--mentions FILE) or --project NAME")
    inputs: InputPaths = {
        "--index": spec.index,
        "--mentions": list(spec.mentions),
        "--synonyms": list(spec.synonyms),
        "--keywords": spec.keywords,
        "--model": spec.base_model,
    }
    prepare_output(out, overwrite, inputs, "rankers")
    if project is not None:
        from termnorm.projects import train_project_ranker

        folder = train_project_ranker(project, spec, out, db, show_progress=not json_out)
    else:
        folder = train_ranker(spec, out, show_progress=not json_out)
    card = json.loads((folder / CARD_NAME).read_text())
    if json_out:
        typer.echo(json.dumps(card, indent=2))
        return
    m = card["metrics"]
    typer.echo(
        f"wrote {card['kind']} ranker to {folder}: {int(m['pairs'])} pairs "
        f"({int(m['positives'])} positive) from {int(m['queries'])} queries, training "
        f"recall@1 {100 * m['recall_at_1']:.1f} / recall@{card['k_c']} "
        f"{100 * m['recall_at_k_c']:.1f}, loss by epoch "
        + ", ".join(f"{x:.4f}" for x in m["epoch_loss"])
        + f", {m['seconds']:.0f} s"
    )
