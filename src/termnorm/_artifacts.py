"""Artifact folders (KG, index, model) with a JSON card, written atomically.

Contract: ``atomic_dir(out)`` yields a temporary sibling folder; on success it replaces
``out`` in one rename, on failure it is removed and ``out`` is untouched.
``prepare_output(out, overwrite, inputs, kind)`` is the one guard every command that writes a
folder runs *before* the work: never into one of its inputs, never over a non-empty folder
without ``--overwrite``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from termnorm.errors import ArtifactMismatchError
from termnorm.paths import ensure_writable, writing

_BLOCK_BYTES = 1 << 22  # what the file hasher reads at a time


def umask_mode(directory: bool) -> int:
    """The mode a new folder (0o777) or file (0o666) gets under the process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


InputPaths = Mapping[str, str | Path | Iterable[str | Path] | None]
"""A command's inputs by option name (``{"--kg": kg, "--mentions": [a, b]}``)."""


def prepare_output(
    out: str | Path, overwrite: bool = False, inputs: InputPaths | None = None, kind: str = "out"
) -> Path:
    """``out`` as an absolute path, once writing a folder there is allowed (the one rule of
    every command that writes a folder; run it *before* the work).

    Refused with :class:`ArtifactMismatchError`, always: the current folder or one of its
    parents, a file, and a folder that is, holds or lies inside one of ``inputs`` (see
    :func:`refuse_input_overlap`). Without ``overwrite``: an existing non-empty folder. A
    missing or empty folder is fine. The writer then replaces ``out`` atomically
    (:func:`atomic_dir`). ``kind`` names the artifact in the messages (``kg``, ``index``).
    """
    path = Path(os.path.abspath(out))
    cwd = Path.cwd().resolve()
    if path.resolve() == cwd or path.resolve() in cwd.parents:
        raise ArtifactMismatchError(
            f"--out {out}: cannot replace the current folder or one of its parents; "
            f"give a new subfolder, e.g. --out {kind}/NAME"
        )
    refuse_input_overlap(path, inputs or {}, shown=out)
    if path.exists() and not path.is_dir():
        raise ArtifactMismatchError(f"--out {out} is a file; give a folder path")
    if path.is_dir() and any(path.iterdir()) and not overwrite:
        raise ArtifactMismatchError(
            f"--out {out} already exists and is not empty; pass --overwrite to replace it "
            "(its contents are deleted), or choose another folder"
        )
    ensure_writable(path)  # a read-only --out is refused before the work, not after it
    return path


def refuse_input_overlap(out: str | Path, inputs: InputPaths, shown: object = None) -> None:
    """:class:`ArtifactMismatchError` when the output ``out`` is one of the existing
    ``inputs`` paths, holds one, or lies inside one (replacing it would destroy that input,
    or the input would change under the run), whatever ``--overwrite`` says."""
    target = Path(out).resolve()
    for option, given in inputs.items():
        paths = [given] if isinstance(given, str | Path) else list(given or ())
        for source in paths:
            resolved = Path(source).resolve()
            if not resolved.exists():
                continue
            if target == resolved:
                relation = "is"
            elif target in resolved.parents:
                relation = "holds"
            elif resolved in target.parents:
                relation = "is inside"
            else:
                continue
            raise ArtifactMismatchError(
                f"--out {shown if shown is not None else out} {relation} the {option} input "
                f"{source}: writing there would destroy it; choose another --out folder"
            )


@contextlib.contextmanager
def atomic_dir(out: str | Path) -> Iterator[Path]:
    """Yield a temp folder next to ``out``; rename it to ``out`` when the block succeeds."""
    out = Path(os.path.abspath(out))
    with writing(out):  # a read-only or forbidden folder is refused here, before any work
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    tmp.chmod(umask_mode(directory=True))  # mkdtemp makes 0700; the result is the user's
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
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
        problem = None if isinstance(card, dict) else "a JSON object was expected"
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        problem = f"not valid JSON: {exc}"
    if problem is not None:
        raise ArtifactMismatchError(
            f"{path} is damaged ({problem}); rebuild the folder with 'termnorm {kind} build'"
        )
    return card


def read_versioned_card(
    folder: str | Path, name: str, kind: str, label: str, version: int, make: str
) -> dict[str, Any]:
    """:func:`read_card` of a ``label`` folder (``"KGE"``, ``"ranker"``) whose card must say
    ``format_version == version``; both refusals tell the user to (re)create it with
    ``make`` (a command line)."""
    folder = Path(folder)
    if not (folder / name).is_file():
        raise ArtifactMismatchError(
            f"{folder} is not a termnorm {label} folder (no {name}); train one with '{make}'"
        )
    card = read_card(folder, name, kind)
    if card.get("format_version") != version:
        raise ArtifactMismatchError(
            f"{folder} has {label} format {card.get('format_version')}, this termnorm reads "
            f"{version}; retrain it with '{make}'"
        )
    return card


def sha256_of(*parts: bytes | str) -> str:
    """Hex SHA-256 over the given parts (strings are UTF-8 encoded), 16 hex chars."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8") if isinstance(part, str) else part)
        h.update(b"\x00")
    return h.hexdigest()[:16]


def file_sha256(*paths: str | Path, chars: int = 16) -> str:
    """Hex SHA-256 of the files' bytes, one file after the other, read in blocks (never
    whole): its first ``chars`` hex characters (64: the whole digest)."""
    h = hashlib.sha256()
    for path in paths:
        hash_file_into(h, path)
    return h.hexdigest()[:chars]


def hash_file_into(h: hashlib._Hash, path: str | Path) -> None:
    """Feed the bytes of the file at ``path`` to the hash ``h``, 4 MiB at a time."""
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK_BYTES), b""):
            h.update(block)
