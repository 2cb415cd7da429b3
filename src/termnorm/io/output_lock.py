"""One run at a time per output: an exclusive, non-blocking lock on a file in its work folder.

A batch job (:mod:`termnorm.io.resumable`, :mod:`termnorm.search.ray_batch`) holds
:class:`OutputLock` on ``FOLDER/.termnorm.lock`` from before it looks at the folder until it
has finished (or failed); a second run on the same output fails at once with
:class:`OutputBusyError` instead of deleting the first run's unfinished parts.

The lock is ``fcntl.flock`` on POSIX (held by the open file description: released by the
kernel when the process dies, even by ``kill -9``, so a stale lock file never blocks a later
run) and ``msvcrt.locking`` on the file's first byte on Windows. Releasing unlinks the lock
file first; an acquirer that locked a file unlinked meanwhile (the path now names another
file, or none) starts again, so two runs never hold locks on two different files. On a
network file system, ``flock`` is only as good as the server's support for it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from termnorm.errors import OutputBusyError

__all__ = ["LOCK_NAME", "OutputBusyError", "OutputLock"]

LOCK_NAME = ".termnorm.lock"


def _try_lock(fd: int) -> bool:
    """Lock ``fd`` exclusively without waiting; ``False`` when another holder has it."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


class OutputLock:
    """An exclusive lock on ``folder/.termnorm.lock`` (``folder`` is created), taken at
    construction, for the run that writes ``output`` (named in the error). Use as a context
    manager or call :meth:`release`.

    Raises :class:`OutputBusyError` ("another run is writing this output ...") when another
    run holds it.
    """

    def __init__(self, folder: str | Path, output: str | Path, option: str = "--output") -> None:
        self.path = Path(folder) / LOCK_NAME
        self._fd: int | None = None
        while self._fd is None:
            Path(folder).mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            if not _try_lock(fd):
                os.close(fd)
                raise OutputBusyError(
                    f"another run is writing this output ({output}); wait for it or choose "
                    f"another {option}"
                )
            if _same_file(fd, self.path):
                self._fd = fd
            else:  # its holder released and unlinked it between our open and our lock
                os.close(fd)

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Unlink the lock file (if still there) and release the lock; idempotent."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):  # gone with its folder, or Windows refusing
            if _same_file(self._fd, self.path):
                self.path.unlink()
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            with contextlib.suppress(OSError):
                os.lseek(self._fd, 0, os.SEEK_SET)
                msvcrt.locking(self._fd, msvcrt.LK_UNLCK, 1)
        os.close(self._fd)  # on POSIX, closing the description releases the flock
        self._fd = None

    def __enter__(self) -> OutputLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
