"""Artifact folders (KG, index, model) with a JSON card, written atomically.

Contract: ``atomic_dir(out)`` yields a temporary sibling folder; on success it replaces
``out`` in one rename, on failure it is removed and ``out`` is untouched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from termnorm.errors import ArtifactMismatchError


@contextlib.contextmanager
def atomic_dir(out: str | Path) -> Iterator[Path]:
    """Yield a temp folder next to ``out``; rename it to ``out`` when the block succeeds."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out.exists():
        backup = out.with_name(f".{out.name}.old")
        shutil.rmtree(backup, ignore_errors=True)
        out.rename(backup)
        tmp.rename(out)
        shutil.rmtree(backup, ignore_errors=True)
    else:
        tmp.rename(out)


def write_card(folder: Path, name: str, card: dict[str, Any]) -> None:
    """Write ``card`` as pretty JSON to ``folder/name``."""
    (folder / name).write_text(json.dumps(card, indent=2, sort_keys=True, default=str) + "\n")


def read_card(folder: str | Path, name: str, kind: str) -> dict[str, Any]:
    """Read ``folder/name``; raise a clear error when the folder is not a ``kind`` artifact."""
    path = Path(folder) / name
    if not path.is_file():
        raise ArtifactMismatchError(
            f"{folder} is not a termnorm {kind} folder (no {name}); "
            f"build one with 'termnorm {kind} build'"
        )
    card: dict[str, Any] = json.loads(path.read_text())
    return card


def sha256_of(*parts: bytes | str) -> str:
    """Hex SHA-256 over the given parts (strings are UTF-8 encoded), 16 hex chars."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8") if isinstance(part, str) else part)
        h.update(b"\x00")
    return h.hexdigest()[:16]
