"""``termnorm index build``: a KG folder → an index folder, encoded here or on Ray workers,
resumable after a kill.

:func:`build_index_folder` is the one build path of the CLI and :func:`termnorm.build_index`:

1. the output is checked before any work (:func:`~termnorm._artifacts.prepare_output`), and
   so is ``--device cuda`` on a machine without a GPU (local engine);
2. the KG's tables and distinct strings are made (:func:`~termnorm.index.tables.index_tables`)
   and cut into shards (:func:`~termnorm.index.shards.plan_shards`);
3. the engine (:class:`~termnorm.index.encoding.LocalEngine` or
   :class:`~termnorm.index.ray_encoding.RayEngine`) encodes the shards the work folder
   ``OUT.shards`` does not hold yet (:class:`~termnorm.index.shards.ShardStore`: its manifest
   refuses a changed KG, model, runtime, device or plan), and the float16 term matrix is
   filled from them as they arrive (:func:`~termnorm.index.encoding.stream_term_vectors`);
4. the index is assembled and saved as every index is (:meth:`TermIndex.from_tables`,
   :meth:`TermIndex.save`), then the work folder is deleted.

The engine only decides who encodes a shard: with the same runtime, device and shard size
the two engines write the same vectors, bit for bit for the deterministic runtimes (torch),
and the same card apart from ``build.engine`` / ``build.workers`` (and ``created``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.encoders.device import resolve_device
from termnorm.engines import Engine
from termnorm.index.base import Backend
from termnorm.index.build_config import ScaleConfig
from termnorm.index.encoding import LocalEngine, ShardEngine
from termnorm.index.shards import Shard, ShardStore, plan_shards, shard_work_dir, texts_digest
from termnorm.index.tables import IndexTables, index_tables
from termnorm.index.term_index import TermIndex
from termnorm.kg import KnowledgeGraph

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.encoders import TermEncoder

__all__ = ["build_index_folder", "shard_manifest"]

logger = logging.getLogger(__name__)


def shard_manifest(
    kg: KnowledgeGraph,
    tables: IndexTables,
    shards: list[Shard],
    identity: dict[str, Any],
    encoder: Any,
    device: str,
    batch_size: int,
) -> dict[str, Any]:
    """What decides a build's shard vectors (the work folder's manifest, see
    :mod:`termnorm.index.shards`); ``identity`` is
    :func:`~termnorm.index.ray_encoding.encoder_identity` of the encoder."""
    runtime = {k: v for k, v in identity.items() if k not in ("fingerprint", "dimension")}
    return {
        "kg": {"fingerprint": kg.content_fingerprint()},
        "model": {
            "fingerprint": identity["fingerprint"],
            "pooling": encoder.pooling.value,
            "max_length": encoder.max_length,
            "dimension": identity["dimension"],
        },
        "runtime": runtime,
        "device": device,
        "batch_size": batch_size,
        "plan": {
            "texts": len(tables.uniques),
            "texts_sha256": texts_digest(tables.uniques),
            "shard_size": max((len(s) for s in shards), default=0),
            "shards": len(shards),
        },
    }


def _engine(
    scale: ScaleConfig, encoder: TermEncoder, batch_size: int, threads: int | None
) -> ShardEngine:
    if scale.engine is Engine.RAY:
        from termnorm.index.ray_encoding import RayEngine

        return RayEngine(
            encoder, scale.device.value, batch_size, scale.workers or 1, scale.address, threads
        )
    return LocalEngine(encoder, batch_size)


def build_index_folder(
    kg_dir: str | Path,
    out: str | Path | None = None,
    *,
    model: str | Path | None = None,
    pooling: str | None = None,
    max_length: int | None = None,
    runtime: str = "torch",
    threads: int | None = None,
    backend: Backend | str = Backend.AUTO,
    memory_budget: int | None = None,
    batch_size: int = 256,
    show_progress: bool = True,
    overwrite: bool = False,
    scale: ScaleConfig | None = None,
) -> tuple[TermIndex, TermEncoder]:
    """Build the index of the KG folder ``kg_dir`` (saved to ``out`` when given) and return
    it with the encoder that describes it (module doc). Options as
    :func:`termnorm.build_index`; ``scale`` says who encodes, how big the shards are and on
    which device.

    Raises:
        DeviceUnavailableError: ``device="cuda"`` without a GPU (or with an ONNX runtime).
        ResumeError: ``OUT.shards`` holds an unfinished build of other inputs (named), and
            not ``overwrite``.
        RayWorkerError: a Ray worker could not load the model or encode a shard.
    """
    from termnorm._artifacts import prepare_output
    from termnorm.encoders import TermEncoder
    from termnorm.index.ray_encoding import encoder_identity

    scale = scale or ScaleConfig()
    local = scale.engine is Engine.LOCAL
    device = resolve_device(scale.device, runtime) if local else "cpu"  # Ray: the workers'
    if out is not None:
        prepare_output(out, overwrite, {"--kg": kg_dir, "--model": model}, "index")
    kg = KnowledgeGraph.load(kg_dir)
    tables = index_tables(kg)
    shards = plan_shards(len(tables.uniques), scale.shard_size)
    encoder = TermEncoder.load(
        model,
        pooling=pooling,
        max_length=max_length,
        device=device,
        runtime=runtime,
        threads=threads,
    )
    engine = _engine(scale, encoder, batch_size, threads)
    with engine:
        store = None
        if out is not None:
            manifest = shard_manifest(
                kg,
                tables,
                shards,
                encoder_identity(encoder),
                encoder,
                engine.describe()["device"],
                batch_size,
            )
            store = ShardStore(
                shard_work_dir(out), manifest, encoder.dimension, overwrite, output=out
            )
        try:
            index = TermIndex.from_tables(
                tables,
                kg,
                encoder,
                shards,
                engine,
                store,
                backend,
                memory_budget,
                show_progress,
                kg_dir,
            )
            if out is not None:
                index.save(out)
        except BaseException:
            if store is not None:
                store.close()
                logger.warning(
                    "the finished shards stay in %s: run the same command again to resume",
                    store.folder,
                )
            raise
    if store is not None:
        store.finish()
    return index, encoder
