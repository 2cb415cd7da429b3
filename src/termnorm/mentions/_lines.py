"""Reading helpers shared by the mention readers: lines of a file, typed fields, errors."""

from __future__ import annotations

from pathlib import Path

from termnorm.errors import InputFormatError

__all__ = ["field_int", "preview", "read_lines", "read_text", "require_exists"]


def require_exists(path: Path) -> Path:
    """``path`` itself, or an :class:`InputFormatError` naming it when it does not exist."""
    if not path.exists():
        raise InputFormatError(path, None, "no such file or folder")
    return path


def read_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 text file without their ``\\n``/``\\r\\n`` (BOM and CRLF tolerated).

    A missing final newline is fine; a file that is not UTF-8 text raises
    :class:`InputFormatError` naming it.
    """
    require_exists(path)
    if path.is_dir():
        raise InputFormatError(path, None, "expected a file, got a folder")
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise InputFormatError(path, None, f"not UTF-8 text ({exc.reason})") from exc


def read_text(path: Path) -> str:
    """The whole text of a UTF-8 file, line ends kept as written (so character offsets into
    it stay valid); a BOM is dropped, and a file that is not UTF-8 text raises
    :class:`InputFormatError` naming it."""
    require_exists(path)
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFormatError(path, None, f"not UTF-8 text ({exc.reason})") from exc


def field_int(path: Path, line_no: int, value: str, what: str) -> int:
    """``int(value)`` or an :class:`InputFormatError` at ``path:line_no`` naming ``what``."""
    try:
        return int(value)
    except ValueError:
        raise InputFormatError(path, line_no, f"{what} must be an integer, got {value!r}") from None


def preview(line: str, width: int = 60) -> str:
    """A short ``repr`` of a line for error messages."""
    return repr(line if len(line) <= width else line[:width] + "…")
