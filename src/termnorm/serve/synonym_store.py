"""The file that keeps domain synonyms added through the service across restarts.

JSON Lines, one ``{"concept_id": ..., "text": ...}`` object per line, UTF-8. New pairs are
appended with one ``write`` per call and flushed to disk (``fsync``) before the service
answers, so a pair the service acknowledged survives a crash or a kill. A line that is not
such an object raises :class:`~termnorm.errors.InputFormatError` naming the file and line:
the service refuses to start on a damaged file rather than drop synonyms silently.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from termnorm.errors import InputFormatError

__all__ = ["append_synonym_store", "read_synonym_store"]


def read_synonym_store(path: Path) -> list[tuple[str, str]]:
    """``(concept_id, text)`` pairs of ``path`` in file order (none when it does not exist)."""
    if not path.exists():
        return []
    pairs: list[tuple[str, str]] = []
    with path.open(encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputFormatError(
                    path, line_no, f"not JSON ({exc.msg}); fix or remove the line"
                ) from None
            if (
                not isinstance(record, dict)
                or not isinstance(record.get("concept_id"), str)
                or not isinstance(record.get("text"), str)
            ):
                raise InputFormatError(
                    path, line_no, 'expected {"concept_id": "...", "text": "..."}; fix the line'
                )
            pairs.append((record["concept_id"], record["text"]))
    return pairs


def append_synonym_store(path: Path, pairs: Sequence[tuple[str, str]]) -> None:
    """Append ``(concept_id, text)`` pairs to ``path`` (created when missing), durably."""
    if not pairs:
        return
    data = "".join(
        json.dumps({"concept_id": c, "text": t}, ensure_ascii=False) + "\n" for c, t in pairs
    ).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
