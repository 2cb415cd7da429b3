"""Train a KGE on a KG's relation table with PyKEEN and write it as a KGE folder.

``train_kge(kg, config, out)``: split the distinct triples (:mod:`termnorm.kge.split`), train
the PyKEEN model on the training part (sLCWA, the model's default loss, Adam), compute the
filtered link-prediction metrics on the test part (:mod:`termnorm.kge.metrics`), run the given
evaluators on the entity vectors (e.g. MCSM and relatedness through
:mod:`termnorm.kge.embedders`), and write everything (:mod:`termnorm.kge.folder`). The KG must
be a saved KG folder (its fingerprint goes on the card). Needs the ``kge`` extra.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.kge._pykeen import pykeen_device, quiet_pykeen, require_pykeen
from termnorm.kge.config import KGEConfig
from termnorm.kge.folder import save_kge
from termnorm.kge.metrics import link_prediction_metrics
from termnorm.kge.split import TripleSplit, split_triples
from termnorm.kge.vectors import KGEVectors

__all__ = ["KGEEvaluator", "real_vectors", "train_kge"]

logger = logging.getLogger(__name__)

KGEEvaluator = Callable[[KGEVectors], Mapping[str, float]]
"""Scores trained entity vectors: ``evaluator(kge) -> {"<name>_<metric>": value}``."""


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


def _ranked_test(test: Any, max_triples: int | None, seed: int) -> Any:
    """The test factory, or a seeded sample of ``max_triples`` of its triples."""
    import torch

    n = int(test.num_triples)
    if max_triples is None or max_triples >= n:
        return test
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    keep = order[:max_triples].sort().values
    return test.clone_and_exchange_triples(test.mapped_triples[keep])


def _versions() -> dict[str, str]:
    return {p: metadata.version(p) for p in ("termnorm", "pykeen", "torch")}


def _run_pipeline(split: TripleSplit, ranked: Any, config: KGEConfig, device: str) -> Any:
    """PyKEEN's pipeline on the split: sLCWA training, rank-based evaluation of ``ranked``."""
    from pykeen.pipeline import pipeline

    # PyKEEN's training memory search probes sub-batch sizes until CUDA raises out-of-memory;
    # on a CPU it only costs a probing pass and torch's pinned-memory warning
    on_gpu = device.startswith("cuda")
    return pipeline(
        training=split.train,
        validation=split.valid,
        testing=ranked,
        model=config.model.pykeen_name,
        model_kwargs={"embedding_dim": config.dim},
        optimizer="Adam",
        optimizer_kwargs={"lr": config.lr},
        training_loop="sLCWA",
        training_loop_kwargs={"automatic_memory_optimization": on_gpu},
        negative_sampler="basic",
        negative_sampler_kwargs={"num_negs_per_pos": config.negatives},
        training_kwargs={
            "num_epochs": config.epochs,
            "batch_size": config.batch_size,
            "use_tqdm": False,
            "pin_memory": on_gpu,
        },
        evaluator="rankbased",
        evaluation_kwargs={
            "batch_size": config.eval_batch_size,
            "use_tqdm": False,
            # with the pipeline's training + validation filter: every known triple is filtered
            "additional_filter_triples": [split.test.mapped_triples],
        },
        random_seed=config.seed,
        device=device,
        use_tqdm=False,
    )


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
    pykeen_version = require_pykeen()
    kg_path = None if isinstance(kg, KnowledgeGraph) else Path(kg)
    graph = kg if isinstance(kg, KnowledgeGraph) else KnowledgeGraph.load(kg)
    if not graph.fingerprint:
        raise ArtifactMismatchError(
            "the KG has no fingerprint (it was built in memory): save it with "
            "KnowledgeGraph.save or 'termnorm kg build' and train on the folder"
        )
    split = split_triples(graph, config.valid_fraction, config.test_fraction, config.seed)
    logger.info("KGE split: %s", split.sizes())
    ranked = _ranked_test(split.test, config.eval_max_triples, config.seed)
    started = time.perf_counter()
    with quiet_pykeen():  # the evaluation's batch-size search warns on every CPU run
        result = _run_pipeline(split, ranked, config, pykeen_device(config.device))

    model: Any = result.model  # an ERModel (entity_representations, relation_representations)
    id_to_entity = {i: e for e, i in split.train.entity_to_id.items()}
    id_to_relation = {i: r for r, i in split.train.relation_to_id.items()}
    card: dict[str, Any] = {
        "config": config.to_card(),
        "pykeen_model": type(model).__name__,
        "loss": type(model.loss).__name__,
        "kg": {"path": str(kg_path) if kg_path else None, "fingerprint": graph.fingerprint},
        "split": {
            "method": "pykeen coverage",
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
        "versions": {**_versions(), "pykeen": pykeen_version},
    }
    kge = KGEVectors(
        concept_ids=[id_to_entity[i] for i in range(len(id_to_entity))],
        vectors=real_vectors(model.entity_representations),
        relation_labels=[id_to_relation[i] for i in range(len(id_to_relation))],
        relation_vectors=real_vectors(model.relation_representations),
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
