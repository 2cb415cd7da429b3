"""Model identity: a SHA-256 over every byte that decides a model folder's vectors.

The content digest covers, in path order, each file of
:meth:`termnorm.encoders.folder.ModelFolder.identity_files` (transformer weights, all shards,
``config.json``, tokenizer files, ``modules.json``, the Transformer, Pooling and Dense
configs, Dense weights), each as ``path, size, bytes``. A model fingerprint is the digest of
that content digest and the pooling mode in use (a caller may override the folder's).

:meth:`TermEncoder.save` stores the digest in ``termnorm_fingerprint.json`` with each file's
size and modification time; later loads reuse it while every file still has the recorded
size and time (same file set, too), and hash the full content otherwise (about 0.1 s for the
90 MB all-MiniLM-L6-v2 from the page cache). Loading never writes into a model folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any

from termnorm.encoders.folder import ModelFolder, read_model_folder, resolve_pooling
from termnorm.encoders.pooling import Pooling

__all__ = [
    "FINGERPRINT_FILE",
    "content_digest",
    "fingerprint_of",
    "model_fingerprint",
    "store_fingerprint",
]

logger = logging.getLogger(__name__)

FINGERPRINT_FILE = "termnorm_fingerprint.json"
RECORD_VERSION = 1
_CHUNK = 1 << 20

_lock = threading.Lock()
_digests: dict[tuple[str, str], str] = {}  # (folder, its file stats as JSON) -> digest


def _stats(folder: ModelFolder) -> dict[str, list[int]]:
    """``relative path -> [size, mtime_ns]`` of the identity files."""
    out = {}
    for path in folder.identity_files():
        st = path.stat()
        out[path.relative_to(folder.root).as_posix()] = [st.st_size, st.st_mtime_ns]
    return out


def _hash(folder: ModelFolder, names: list[str]) -> str:
    h = hashlib.sha256()
    for name in names:
        path = folder.root / name
        h.update(f"{name}\0{path.stat().st_size}\0".encode())
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
    return h.hexdigest()


def _stored(folder: ModelFolder, stats: dict[str, list[int]]) -> str | None:
    """The recorded digest when the record matches the files as they are now."""
    path = folder.root / FINGERPRINT_FILE
    if not path.is_file():
        return None
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        logger.warning("%s is not valid JSON; hashing the model instead", path)
        return None
    if record.get("version") != RECORD_VERSION or record.get("files") != stats:
        return None
    digest = record.get("sha256")
    return digest if isinstance(digest, str) else None


def content_digest(folder: ModelFolder) -> str:
    """SHA-256 of the folder's identity files (stored record reused when still valid)."""
    stats = _stats(folder)
    key = (str(folder.root.resolve()), json.dumps(stats, sort_keys=True))
    with _lock:
        if key in _digests:
            return _digests[key]
    digest = _stored(folder, stats)
    if digest is None:
        digest = _hash(folder, sorted(stats))
    with _lock:
        _digests[key] = digest
    return digest


def store_fingerprint(path: str | Path) -> str:
    """Hash a model folder's full content and record it in ``FINGERPRINT_FILE``; the digest."""
    folder = read_model_folder(path)
    stats = _stats(folder)
    digest = _hash(folder, sorted(stats))
    record = {"version": RECORD_VERSION, "sha256": digest, "files": stats}
    tmp = folder.root / f".{FINGERPRINT_FILE}.tmp"
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(folder.root / FINGERPRINT_FILE)
    return digest


def fingerprint_of(digest: str, pooling: Pooling) -> str:
    """The model fingerprint of content ``digest`` run with ``pooling``."""
    return hashlib.sha256(f"{digest}\0{pooling.value}".encode()).hexdigest()


def model_fingerprint(path: str | Path, pooling: Pooling | str | None = None) -> str:
    """Identity of a model folder run with ``pooling`` (default: the folder's, else mean)."""
    folder = read_model_folder(path)
    return fingerprint_of(content_digest(folder), resolve_pooling(folder, pooling))
