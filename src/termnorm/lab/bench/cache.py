"""Result cache of ``termnorm bench``: one JSON file per (model, dataset, evaluator) key.

The key hashes the model fingerprint (weights + pooling, or the baseline's name), the
dataset's content (file bytes, or the KG fingerprint), the evaluator with its options and the
termnorm version, so a changed input never reads a stale result and an unchanged suite
re-renders its report without evaluating anything. Built KGs and indexes are cached beside
the results (``kgs/``, ``indexes/``); a built KG's key adds a hash of the loaders' source, so a
loader change rebuilds it (and, through the KG fingerprint, re-evaluates what depends on it).
A change of search or evaluation code without a version bump needs ``--force``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from termnorm._artifacts import hash_file_into, sha256_of
from termnorm.io.tables import atomic_file

__all__ = ["ResultCache", "content_hash"]

logger = logging.getLogger(__name__)


def content_hash(path: Path) -> str:
    """SHA-256 (16 hex chars) of a file's bytes, or of a folder's file names and bytes."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        h.update(str(file.relative_to(path) if file != path else file.name).encode())
        hash_file_into(h, file)
    return h.hexdigest()[:16]


class ResultCache:
    """JSON records under ``folder/results``; ``enabled=False`` reads nothing (``--force``)
    but still writes, so the next run is fast."""

    def __init__(self, folder: Path, enabled: bool = True) -> None:
        self.folder = folder
        self.enabled = enabled
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(*parts: object) -> str:
        """Stable key of JSON-serialisable parts."""
        return sha256_of(*(json.dumps(p, sort_keys=True, default=str) for p in parts))

    def _file(self, key: str) -> Path:
        return self.folder / "results" / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record, or ``None`` (disabled, absent or unreadable)."""
        file = self._file(key)
        if not self.enabled or not file.is_file():
            self.misses += 1
            return None
        try:
            record: dict[str, Any] = json.loads(file.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            logger.warning("ignoring unreadable cache entry %s: %s", file, exc)
            self.misses += 1
            return None
        self.hits += 1
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Write ``record`` atomically (temp file, then rename)."""
        with atomic_file(self._file(key)) as tmp:
            tmp.write_text(json.dumps(record, indent=1, sort_keys=True, allow_nan=True))
