"""Where termnorm caches built artifacts (default index, ONNX graphs, evaluation results),
and the one translation of "this folder is not writable" into what to change."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from termnorm.errors import NotWritableError

__all__ = ["CACHE_ENV", "cache_dir", "ensure_writable", "not_writable", "writing"]

CACHE_ENV = "TERMNORM_CACHE"

#: The ``errno`` values of a write refused by the folder or the file system.
NOT_WRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def cache_dir() -> Path:
    """``$TERMNORM_CACHE`` if set, else the user cache dir (e.g. ``~/.cache/termnorm``)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("termnorm"))


def _in_cache(path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(cache_dir().resolve())
    except (OSError, RuntimeError):
        return False


def not_writable(exc: OSError, path: str | Path | None = None) -> NotWritableError:
    """The :class:`NotWritableError` for a refused write (the file the error names, else
    ``path``): when either lies in the cache it says to set ``TERMNORM_CACHE``, otherwise to
    choose a writable output."""
    where = Path(exc.filename if exc.filename is not None else (path or "."))
    reason = exc.strerror or str(exc)
    if any(_in_cache(Path(p)) for p in (where, path) if p is not None):
        return NotWritableError(
            f"cannot write {where}: {reason}. termnorm keeps its cache (default index, ONNX "
            f"graphs) in {cache_dir()}; set {CACHE_ENV} to a writable folder, e.g. "
            f"export {CACHE_ENV}=/tmp/termnorm-cache"
        )
    return NotWritableError(
        f"cannot write {where}: {reason}; choose a writable output (another --out or "
        "--output) or make its folder writable"
    )


@contextlib.contextmanager
def writing(path: str | Path | None = None) -> Iterator[None]:
    """Run a block that writes (to ``path``); a write refused by the folder or the file system
    (read-only, permission denied) becomes :func:`not_writable`'s error."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in NOT_WRITABLE:
            raise
        raise not_writable(exc, path) from exc


def ensure_writable(path: str | Path) -> None:
    """Refuse early, before any work, a ``path`` (a file or folder to create or replace) that
    could not be written: :func:`not_writable`'s error when its nearest existing folder is not
    writable (``os.access`` sees a read-only file system, root included). Creates nothing."""
    target = Path(os.path.abspath(path))
    folder = target if target.is_dir() else target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not os.access(folder, os.W_OK):
        why = f"the folder {folder} is read-only or not writable by this user"
        raise not_writable(OSError(errno.EACCES, why, str(target)))
