"""``termnorm train``: knowledge-infused contrastive training (CODER) of a term encoder.

With only ``--kg`` and ``--out`` it runs the recommended CPU recipe (see README "Results");
every default below comes from :class:`termnorm.training.TrainConfig`. Multi-process runs go
through torchrun: ``torchrun --nproc_per_node N --no-python termnorm train ...``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import typer

from termnorm.training.config import FIELD_HELP as H
from termnorm.training.config import LossKind, Precision, TrainConfig

logger = logging.getLogger(__name__)

__all__ = ["build_dev_evaluator", "register"]

_D = TrainConfig()


def build_dev_evaluator(
    kg: Any, mentions: Path, mention_format: str | None, name: str = "dev"
) -> Any:
    """``encoder -> metrics``: index the KG with the current weights, normalize the mentions.

    Metrics are prefixed with ``name`` (``dev_acc@1`` is the one used to keep the best model).
    """
    from termnorm.evaluation.normalization import NormalizationEvaluator
    from termnorm.index import TermIndex
    from termnorm.mentions import read_mentions
    from termnorm.search.normalizer import Normalizer

    evaluator = NormalizationEvaluator(
        read_mentions(mentions, mention_format), ks=(1, 5), name=name
    )

    def evaluate(encoder: Any) -> dict[str, float]:
        index = TermIndex.build(kg, encoder, backend="exact", show_progress=False)
        return evaluator(Normalizer(index, encoder))

    return evaluate


def register(app: typer.Typer) -> None:
    """Attach ``train`` to ``app``."""

    @app.command("train")
    def train(
        ctx: typer.Context,
        kg: Path = typer.Option(..., "--kg", help=H["kg"], exists=True, file_okay=False),
        out: Path = typer.Option(..., "--out", help=H["out"]),
        base_model: Path | None = typer.Option(None, "--base-model", help=H["base_model"]),
        pooling: str | None = typer.Option(None, "--pooling", help=H["pooling"]),
        loss: LossKind = typer.Option(_D.loss, "--loss", help=H["loss"]),
        steps: int = typer.Option(_D.steps, "--steps", help=H["steps"]),
        lr: float = typer.Option(_D.lr, "--lr", help=H["lr"]),
        weight_decay: float = typer.Option(
            _D.weight_decay, "--weight-decay", help=H["weight_decay"]
        ),
        relation_lr: float | None = typer.Option(None, "--relation-lr", help=H["relation_lr"]),
        max_grad_norm: float = typer.Option(
            _D.max_grad_norm, "--max-grad-norm", help=H["max_grad_norm"]
        ),
        k: int = typer.Option(_D.k, "--k", help=H["k"]),
        m: int = typer.Option(_D.m, "--m", help=H["m"]),
        synonym_share: float = typer.Option(
            _D.synonym_share, "--synonym-share", help=H["synonym_share"]
        ),
        lang_balanced: bool = typer.Option(
            _D.lang_balanced, "--lang-balanced/--no-lang-balanced", help=H["lang_balanced"]
        ),
        warmup: float = typer.Option(_D.warmup, "--warmup", help=H["warmup"]),
        grad_accum: int = typer.Option(_D.grad_accum, "--grad-accum", help=H["grad_accum"]),
        max_length: int = typer.Option(_D.max_length, "--max-length", help=H["max_length"]),
        precision: Precision = typer.Option(_D.precision, "--precision", help=H["precision"]),
        freeze_embeddings: bool = typer.Option(
            _D.freeze_embeddings,
            "--freeze-embeddings/--no-freeze-embeddings",
            help=H["freeze_embeddings"],
        ),
        freeze_layers: int = typer.Option(
            _D.freeze_layers, "--freeze-layers", help=H["freeze_layers"]
        ),
        hard_negatives: bool = typer.Option(
            _D.hard_negatives, "--hard-negatives/--no-hard-negatives", help=H["hard_negatives"]
        ),
        hard_share: float = typer.Option(_D.hard_share, "--hard-share", help=H["hard_share"]),
        hard_refresh: int = typer.Option(_D.hard_refresh, "--hard-refresh", help=H["hard_refresh"]),
        hard_neighbours: int = typer.Option(
            _D.hard_neighbours, "--hard-neighbours", help=H["hard_neighbours"]
        ),
        hard_cluster: int = typer.Option(_D.hard_cluster, "--hard-cluster", help=H["hard_cluster"]),
        hard_max_concepts: int = typer.Option(
            _D.hard_max_concepts, "--hard-max-concepts", help=H["hard_max_concepts"]
        ),
        rel_weight: float | None = typer.Option(None, "--rel-weight", help=H["rel_weight"]),
        sty_weight: float = typer.Option(_D.sty_weight, "--sty-weight", help=H["sty_weight"]),
        transe_margin: float = typer.Option(
            _D.transe_margin, "--transe-margin", help=H["transe_margin"]
        ),
        seed: int = typer.Option(_D.seed, "--seed", help=H["seed"]),
        dev: Path | None = typer.Option(None, "--dev", help=H["dev"], exists=True),
        dev_format: str | None = typer.Option(None, "--dev-format", help=H["dev_format"]),
        dev_kg: Path | None = typer.Option(None, "--dev-kg", help=H["dev_kg"], exists=True),
        eval_every: int = typer.Option(_D.eval_every, "--eval-every", help=H["eval_every"]),
        keep_best: bool = typer.Option(
            _D.keep_best, "--keep-best/--keep-last", help=H["keep_best"]
        ),
        wise_alpha: float = typer.Option(_D.wise_alpha, "--wise-alpha", help=H["wise_alpha"]),
        checkpoint_every: int = typer.Option(
            _D.checkpoint_every, "--checkpoint-every", help=H["checkpoint_every"]
        ),
        keep_checkpoints: int = typer.Option(
            _D.keep_checkpoints, "--keep-checkpoints", help=H["keep_checkpoints"]
        ),
        clean_checkpoints: bool = typer.Option(
            _D.clean_checkpoints,
            "--clean-checkpoints/--no-clean-checkpoints",
            help=H["clean_checkpoints"],
        ),
        log_every: int = typer.Option(_D.log_every, "--log-every", help=H["log_every"]),
        resume: bool = typer.Option(False, "--resume", help="Continue from the newest checkpoint."),
        overwrite: bool = typer.Option(False, "--overwrite", help=H["overwrite"]),
        device: str | None = typer.Option(None, "--device", help=H["device"]),
        threads: int | None = typer.Option(None, "--threads", help=H["threads"]),
        encode_batch: int = typer.Option(_D.encode_batch, "--encode-batch", help=H["encode_batch"]),
        train_data: str = typer.Option(_D.train_data, "--train-data", help=H["train_data"]),
        mentions: list[Path] = typer.Option([], "--mentions", help=H["mentions"]),
        mentions_format: str | None = typer.Option(
            None, "--mentions-format", help=H["mentions_format"]
        ),
        domain_share: float = typer.Option(
            _D.domain_share, "--domain-share", help=H["domain_share"]
        ),
        od_ratio: float = typer.Option(_D.od_ratio, "--od-ratio", help=H["od_ratio"]),
        texts_per_concept: int = typer.Option(
            _D.texts_per_concept, "--texts-per-concept", help=H["texts_per_concept"]
        ),
        config_json: Path | None = typer.Option(
            None, "--config", help="JSON file of TrainConfig fields (flags given here override)."
        ),
    ) -> None:
        """Train an encoder on a KG with CODER's losses; write a sentence-transformers folder.

        Examples: termnorm train --kg kg/hpo --out models/hpo (the CPU recipe: synonym-only MS
        loss with hard negatives, 1,500 steps); add --loss coder for CODER's relation loss.
        """
        from termnorm.kg import KnowledgeGraph
        from termnorm.training import Trainer
        from termnorm.training.distributed import cleanup, init_distributed

        given = dict(locals())
        values: dict[str, Any] = {}
        if config_json is not None:
            values.update(TrainConfig.check_keys(json.loads(config_json.read_text()), config_json))
        for key, value in given.items():
            if key in {"ctx", "resume", "config_json"} or key not in H:
                continue
            source = ctx.get_parameter_source(key)
            if config_json is None or source is None or source.name != "DEFAULT":
                values[key] = value
        if "mentions" in values:
            values["mentions"] = tuple(str(p) for p in values["mentions"])
        config = TrainConfig.from_dict(
            {k: (v.value if hasattr(v, "value") else v) for k, v in values.items()}
        )
        config.validate()
        info = init_distributed(config.device)
        graph = KnowledgeGraph.load(kg)
        evaluator = None
        if config.dev is not None:
            dev_graph = KnowledgeGraph.load(config.dev_kg) if config.dev_kg else graph
            evaluator = build_dev_evaluator(dev_graph, config.dev, config.dev_format)
        make: Any = Trainer
        if config.loss is LossKind.TRIPLET:  # Train:O/OD texts + batch-hard triplet loss
            from termnorm.cli._triplet import triplet_trainer_factory

            make = triplet_trainer_factory(config)
        else:  # CODER's losses: Train:OD mentions join the KG's terms
            from termnorm.cli._train_data import with_domain_terms

            graph = with_domain_terms(config, graph)
        try:
            result = make(config, kg=graph, evaluator=evaluator, dist_info=info).train(
                resume=resume
            )
        finally:
            cleanup(info)
        if result.interrupted:
            typer.echo(
                f"interrupted at step {result.steps}: checkpoint saved in {out}; "
                "rerun with --resume to continue",
                err=True,
            )
            raise typer.Exit(128 + (result.signal or 2))
        if info.is_main:
            summary = {"out": str(result.out), "steps": result.steps, **result.final_metrics}
            typer.echo(json.dumps(summary, indent=2))
