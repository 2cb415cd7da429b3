"""Text → vectors: model folders run as sentence-transformers runs them (names resolve lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.encoders.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MAX_LENGTH
    from termnorm.encoders.fingerprint import model_fingerprint
    from termnorm.encoders.folder import ModelFolder, folder_pooling, read_model_folder
    from termnorm.encoders.markers import MENTION_END, MENTION_START, add_mention_markers
    from termnorm.encoders.memo import MemoEncoder
    from termnorm.encoders.pooling import Pooling, pool
    from termnorm.encoders.runtime import Runtime, choose_runtime
    from termnorm.encoders.transformer import TermEncoder, default_model_path
    from termnorm.encoders.vocabulary import VocabularyExtension, extend_vocabulary

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_LENGTH",
    "MENTION_END",
    "MENTION_START",
    "MemoEncoder",
    "ModelFolder",
    "Pooling",
    "Runtime",
    "TermEncoder",
    "VocabularyExtension",
    "add_mention_markers",
    "choose_runtime",
    "default_model_path",
    "extend_vocabulary",
    "folder_pooling",
    "model_fingerprint",
    "pool",
    "read_model_folder",
]

_NAMES = {  # module: the names it gives
    "defaults": "DEFAULT_BATCH_SIZE DEFAULT_MAX_LENGTH",
    "fingerprint": "model_fingerprint",
    "folder": "ModelFolder folder_pooling read_model_folder",
    "markers": "MENTION_END MENTION_START add_mention_markers",
    "memo": "MemoEncoder",
    "pooling": "Pooling pool",
    "runtime": "Runtime choose_runtime",
    "transformer": "TermEncoder default_model_path",
    "vocabulary": "VocabularyExtension extend_vocabulary",
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
