"""Train a KGE on a KG's relation table with PyKEEN and write it as a KGE folder.

``train_kge(kg, config, out)``: split the distinct triples (:mod:`termnorm.kge.split`), train
the PyKEEN model on the training part (sLCWA or 1-N scoring, with the model's recipe,
:mod:`termnorm.kge.recipes`; early stopping on the validation MRR, :mod:`termnorm.kge.stopping`),
compute the filtered link-prediction metrics on the test part (:func:`link_prediction_metrics`), run the given
evaluators on the entity vectors (e.g. MCSM and relatedness through
:mod:`termnorm.kge.embedders`), and write everything (:mod:`termnorm.kge.folder`). The KG must
be a saved KG folder (its fingerprint goes on the card). Needs the ``kge`` extra.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.kge._pykeen import pykeen_device, quiet_pykeen, require_pykeen
from termnorm.kge.config import KGEConfig
from termnorm.kge.folder import save_kge
from termnorm.kge.recipes import batch_size, negatives, pipeline_arguments
from termnorm.kge.split import sample_triples, split_triples, with_reciprocal_relations
from termnorm.kge.stopping import EarlyStopping
from termnorm.kge.vectors import KGEVectors

__all__ = [
    "LINKPRED_METRICS",
    "KGEEvaluator",
    "link_prediction_metrics",
    "real_vectors",
    "train_kge",
]

logger = logging.getLogger(__name__)

KGEEvaluator = Callable[[KGEVectors], Mapping[str, float]]
"""Scores trained entity vectors: ``evaluator(kge) -> {"<name>_<metric>": value}``."""


LINKPRED_METRICS = {
    "hits@1": "hits_at_1",
    "hits@3": "hits_at_3",
    "hits@10": "hits_at_10",
    "mr": "arithmetic_mean_rank",
    "mrr": "inverse_harmonic_mean_rank",
}
"""Our name -> PyKEEN's metric key (side "both", rank type "realistic")."""


def link_prediction_metrics(metric_results: Any, prefix: str = "linkpred") -> dict[str, float]:
    """``{"<prefix>_hits@1": ..., "<prefix>_mr": ..., "<prefix>_mrr": ...}`` from PyKEEN's
    ``RankBasedMetricResults``: for every test triple (h, r, t), the ranks of t among all
    entities for (h, r, ?) and of h for (?, r, t), every other known triple removed
    (*filtered*), both sides, *realistic* ranks (ties count half, as in ``termnorm eval
    linkpred``); hits@n = share of ranks ≤ n, MR = mean rank, MRR = mean 1/rank."""
    return {
        f"{prefix}_{ours}": float(metric_results.get_metric(f"both.realistic.{key}"))
        for ours, key in LINKPRED_METRICS.items()
    }


def real_vectors(representations: Sequence[Any]) -> np.ndarray:
    """All rows of PyKEEN representations as one real float32 matrix ``[n, d]``: complex
    tensors become ``[Re; Im]``, several representations (SimplE) are concatenated."""
    import torch

    parts = []
    with torch.no_grad():
        for rep in representations:
            x = rep(indices=None).detach().cpu()  # [n, d] real or complex
            if x.is_complex():
                x = torch.cat([x.real, x.imag], dim=-1)  # [n, 2d]
            parts.append(x.reshape(x.shape[0], -1).float())
    return torch.cat(parts, dim=-1).numpy()


@contextmanager
def frozen_gc() -> Iterator[None]:
    """Move the objects alive now out of the garbage collector's reach for the block.

    PyKEEN's training loop calls ``gc.collect()`` after every epoch; in a process that has
    loaded torch, pandas and the KG, each call walks millions of long-lived objects (0.8 s on
    a shared CPU, more than a small KG's whole epoch). Frozen objects are skipped; new ones
    are still collected, and the freeze is undone on exit."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def train_kge(
    kg: KnowledgeGraph | str | Path,
    config: KGEConfig,
    out: str | Path,
    evaluators: Sequence[KGEEvaluator] = (),
) -> KGEVectors:
    """Train, evaluate and save a KGE of ``kg`` (a KG folder or a loaded, saved KG); return it.

    The card records the settings, the KG's path and fingerprint, the split sizes, the
    per-epoch training losses, the metrics and the versions of termnorm, PyKEEN and torch.
    """
    require_pykeen()
    from pykeen.pipeline import pipeline

    kg_path = None if isinstance(kg, KnowledgeGraph) else Path(kg)
    graph = kg if isinstance(kg, KnowledgeGraph) else KnowledgeGraph.load(kg)
    if not graph.fingerprint:
        raise ArtifactMismatchError(
            "the KG has no fingerprint (it was built in memory): save it with "
            "KnowledgeGraph.save or 'termnorm kg build' and train on the folder"
        )
    split = split_triples(graph, config.valid_fraction, config.test_fraction, config.seed)
    logger.info("KGE split: %s", split.sizes())
    ranked = sample_triples(split.test, config.eval_max_triples, config.seed)
    arguments = pipeline_arguments(config)
    count = negatives(config)
    reciprocal = count is None
    training = with_reciprocal_relations(split.train) if reciprocal else split.train
    started = time.perf_counter()
    device = pykeen_device(config.device)
    on_gpu = device.startswith("cuda")
    # quiet_pykeen: the evaluation's batch-size search warns on every CPU run
    with quiet_pykeen(), EarlyStopping(config, split) as stopping, frozen_gc():
        result = pipeline(
            training=training,
            testing=ranked,
            **arguments,
            **stopping.pipeline_arguments(),
            training_kwargs={
                "num_epochs": config.epochs,
                "batch_size": batch_size(config),
                "use_tqdm": config.progress,  # one bar over the epochs, with an ETA
                "use_tqdm_batch": False,
                "tqdm_kwargs": {"desc": f"{config.model.pykeen_name} epochs"},
                "pin_memory": on_gpu,  # torch warns about pinned memory without a GPU
            },
            # PyKEEN's memory search probes sub-batch sizes until CUDA runs out of memory
            training_loop_kwargs={"automatic_memory_optimization": on_gpu},
            evaluator="rankbased",
            # held by the evaluator: PyKEEN's stopper passes evaluator.batch_size to every check
            # after the first, and None there means "32, with a warning" on CPU
            evaluator_kwargs={"batch_size": config.eval_batch_size},
            evaluation_kwargs={
                "batch_size": config.eval_batch_size,
                "use_tqdm": False,
                # with the pipeline's training + (sampled) validation filter: every known
                # triple is filtered
                "additional_filter_triples": [
                    split.valid.mapped_triples,
                    split.test.mapped_triples,
                ],
            },
            random_seed=config.seed,
            device=device,
        )
        model: Any = result.model  # an ERModel (entity and relation representations)
        early = stopping.finish(result)
    id_to_entity = {i: e for e, i in split.train.entity_to_id.items()}
    id_to_relation = {i: r for r, i in split.train.relation_to_id.items()}
    card: dict[str, Any] = {
        "config": config.to_card(),
        "pykeen_model": type(model).__name__,
        "loss": type(model.loss).__name__,
        "training": {
            key: arguments[key]
            for key in ("model_kwargs", "loss", "loss_kwargs", "optimizer", "optimizer_kwargs")
        }
        | {
            "training_loop": arguments["training_loop"],
            "negatives": "all (1-N)" if count is None else count,
            "reciprocal_relations": reciprocal,
            "batch_size": batch_size(config),
        },
        "early_stopping": early,
        "kg": {"path": str(kg_path) if kg_path else None, "fingerprint": graph.fingerprint},
        "split": {
            "method": split.method,
            # requested validation/test triples kept in training so their ends stay there
            "kept_in_training": split.kept_in_training,
            "seed": config.seed,
            "fractions": {
                "train": config.train_fraction,
                "valid": config.valid_fraction,
                "test": config.test_fraction,
            },
            "sizes": split.sizes(),
            "entities": len(id_to_entity),
            "relations": len(id_to_relation),
            "duplicates_dropped": split.duplicates_dropped,
        },
        "linkpred": {
            "ranked_test_triples": int(ranked.num_triples),
            "test_triples": int(split.test.num_triples),
            "sides": "both (head and tail)",
            "rank": "realistic (ties count half)",
            "filtered_against": "train + valid + test",
        },
        "epoch_losses": [float(x) for x in result.losses],
        "train_seconds": float(result.train_seconds),
        "evaluate_seconds": float(result.evaluate_seconds),
        "vectors": "real view: complex → [Re; Im], SimplE → [head; tail]; cosine similarity",
        "versions": {p: metadata.version(p) for p in ("termnorm", "pykeen", "torch")},
    }
    kge = KGEVectors(
        concept_ids=[id_to_entity[i] for i in range(len(id_to_entity))],
        vectors=real_vectors(model.entity_representations),
        relation_labels=[id_to_relation[i] for i in range(len(id_to_relation))],
        # with reciprocal relations, relation r is row 2r and r⁻¹ row 2r + 1
        relation_vectors=real_vectors(model.relation_representations)[:: 2 if reciprocal else 1],
        card=card,
    )
    metrics = link_prediction_metrics(result.metric_results)
    for evaluate in evaluators:
        metrics.update(evaluate(kge))
    card["metrics"] = metrics
    card["seconds"] = time.perf_counter() - started

    def write_params(path: Path) -> None:
        import torch

        torch.save(model.state_dict(), path)

    save_kge(out, kge, split.labeled(), write_params)
    return kge
