"""``termnorm kge train`` and ``termnorm kge info``: knowledge-graph embeddings with PyKEEN.

``train`` composes :func:`termnorm.kge.train_kge` with the similarity evaluators of the
paper's Table 2 run on the entity vectors: MCSM over the KG's semantic types (concepts
embedded by their entity vector) and, per ``--relatedness`` file, Spearman over the pairs
whose two terms name one KG concept each (coverage reported). Registering is cheap; the KGE,
evaluation and PyKEEN modules load when a command runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from termnorm.cli._config_options import options_of, with_config_options
from termnorm.cli._options import overwrite_option
from termnorm.evaluation.options import KGESimilarityOptions
from termnorm.kge.config import KGEConfig

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.kg import KnowledgeGraph
    from termnorm.kge import KGEEvaluator

__all__ = ["register", "relatedness_name", "similarity_evaluators"]

SUMMARY = ("hits@1", "hits@3", "hits@10", "mr", "mrr")
PARTS = ("train", "valid", "test")


def relatedness_name(spec: str) -> tuple[str, Path]:
    """``NAME=PATH`` or ``PATH`` (the name is then the file stem, lower case, ``-`` → ``_``)."""
    name, eq, path = spec.partition("=")
    if eq and name and "/" not in name:
        return name, Path(path)
    return Path(spec).stem.lower().replace("-", "_"), Path(spec)


def similarity_evaluators(
    kg: KnowledgeGraph,
    mcsm: bool,
    mcsm_k: int,
    mcsm_max_per_type: int | None,
    relatedness: Sequence[str],
    seed: int,
) -> list[KGEEvaluator]:
    """MCSM (``mcsm_*``) and relatedness (``<name>_*``) evaluators of entity vectors; a pair
    file none of whose pairs names two KG concepts is refused here, before any training."""
    from termnorm.errors import EmptyResultError
    from termnorm.evaluation.mcsm import MCSMEvaluator
    from termnorm.evaluation.relatedness import RelatednessEvaluator
    from termnorm.kge import ConceptIdEmbedder, KGEVectors, TermEmbedder, kg_named_by_id
    from termnorm.kge.embedders import TermConcepts

    evaluators: list[KGEEvaluator] = []
    terms: TermConcepts | None = None
    if mcsm:
        by_id = MCSMEvaluator(
            kg_named_by_id(kg), k=mcsm_k, max_concepts_per_type=mcsm_max_per_type, seed=seed
        )

        def score_mcsm(kge: KGEVectors) -> dict[str, float]:
            return by_id(ConceptIdEmbedder(kge))

        evaluators.append(score_mcsm)
    for spec in relatedness:
        name, path = relatedness_name(spec)
        pairs = RelatednessEvaluator(path, name=name)
        terms = terms or TermConcepts(kg)
        first = [terms.concept_of(t) for t in pairs.pairs.term1]
        second = [terms.concept_of(t) for t in pairs.pairs.term2]
        if not any(a and b for a, b in zip(first, second, strict=True)):
            raise EmptyResultError(
                f"no pair of {path} has both terms naming a concept of the KG, so the KGE "
                f"could not be scored on it; drop --relatedness {spec}"
            )

        def score_pairs(kge: KGEVectors, pairs: RelatednessEvaluator = pairs) -> dict[str, float]:
            return pairs(TermEmbedder(kge, kg))

        evaluators.append(score_pairs)
    return evaluators


def _summary(card: dict[str, Any], title: str) -> None:
    """The card's main facts and metrics as a two-column table."""
    metrics = card.get("metrics", {})
    config = card.get("config", {})
    sizes = card.get("split", {}).get("sizes", {})
    table = Table(title=title)
    table.add_column("item")
    table.add_column("value", justify="right")
    table.add_row("model", f"{card.get('pykeen_model')} (dim {config.get('dim')})")
    training = card.get("training", {})
    early = card.get("early_stopping", {})
    epochs = early.get("epochs_run", config.get("epochs"))
    if early.get("best_epoch") is not None:
        epochs = f"{epochs} (best {early['best_epoch']})"
    lr = training.get("optimizer_kwargs", {}).get("lr", config.get("lr"))
    table.add_row("epochs / lr / seed", f"{epochs} / {lr} / {config.get('seed')}")
    if training:
        table.add_row("loss / negatives", f"{training.get('loss')} / {training.get('negatives')}")
    table.add_row("KG fingerprint", str(card.get("kg", {}).get("fingerprint")))
    table.add_row(
        "entities / relations",
        f"{card.get('split', {}).get('entities')} / {card.get('split', {}).get('relations')}",
    )
    table.add_row("train / valid / test", " / ".join(str(sizes.get(p)) for p in PARTS))
    kept = card.get("split", {}).get("kept_in_training")
    if kept:
        table.add_row("kept in training", f"{kept} triples (an end would leave training)")
    table.add_section()
    shown = [f"linkpred_{m}" for m in SUMMARY] + ["mcsm_mean"]
    shown += [k for k in metrics if k.endswith(("_spearman", "_coverage"))]
    for key in shown:
        if key in metrics:
            value = metrics[key]
            table.add_row(key, "-" if value is None else f"{value:.4f}")
    Console().print(table)


def register(app: typer.Typer) -> None:
    """Attach the ``kge`` command group (``train``, ``info``) to ``app``."""
    kge_app = typer.Typer(
        help="Knowledge-graph embeddings (PyKEEN) of a KG's relations.", no_args_is_help=True
    )
    app.add_typer(kge_app, name="kge")

    @kge_app.command(
        "train",
        epilog="Examples:\n\n  termnorm kge train --kg kg/hpo --model complex --out kge/hpo_complex\n\n"
        "  termnorm kge train --kg kg/hpo --model transe --epochs 50 --out kge/hpo_transe "
        "--relatedness ../shared/benchmarks/mayosrs/MiniMayoSRS.csv "
        "--relatedness umnsrs=../shared/benchmarks/umnsrs/umnsrs-sim.txt",
    )
    @with_config_options(KGESimilarityOptions, KGEConfig)
    def train(
        kg: Path = typer.Option(..., "--kg", help="KG folder (from 'termnorm kg build')."),
        out: Path = typer.Option(..., "--out", "-o", help="KGE folder to write."),
        overwrite: bool = overwrite_option(),
        json_out: bool = typer.Option(False, "--json", help="Print the card as JSON."),
        **fields: Any,
    ) -> None:
        """Train a KGE on the KG's relations (90/4/6 split with every valid/test entity seen
        in training), with filtered link prediction and similarity metrics on the card."""
        from termnorm._artifacts import prepare_output
        from termnorm.kg import KnowledgeGraph
        from termnorm.kge import train_kge

        similarity = options_of(KGESimilarityOptions, fields)
        relatedness = similarity.relatedness or ()
        pairs = [relatedness_name(spec)[1] for spec in relatedness]
        prepare_output(out, overwrite, {"--kg": kg, "--relatedness": pairs}, "kge")
        config = options_of(KGEConfig, fields)
        graph = KnowledgeGraph.load(kg)
        evaluators = similarity_evaluators(
            graph,
            similarity.mcsm,
            similarity.mcsm_k,
            similarity.mcsm_max_per_type,
            relatedness,
            config.seed,
        )
        kge = train_kge(kg, config, out, evaluators)
        if json_out:
            typer.echo(json.dumps(kge.card, indent=2, default=str))
        else:
            _summary(kge.card, title=f"KGE {out}")

    @kge_app.command("info")
    def info(
        kge_dir: Path = typer.Argument(..., help="KGE folder written by 'termnorm kge train'."),
        json_out: bool = typer.Option(False, "--json", help="Print the card as JSON."),
    ) -> None:
        """Print a KGE folder's card: model, settings, KG fingerprint, split, metrics.

        Example: termnorm kge info kge/hpo_complex
        """
        from termnorm.kge import load_kge

        card = load_kge(kge_dir).card
        if json_out:
            typer.echo(json.dumps(card, indent=2, default=str))
        else:
            _summary(card, title=str(kge_dir))
