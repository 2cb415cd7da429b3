"""The process that runs Ab3P for :mod:`termnorm.mentions.abbreviations` (stdlib only).

Ab3P is C++ and crashes the process it runs in on some inputs (a segmentation fault on a
long run of text, measured from about 40,000 tokens, with or without full stops). It runs
here, in a process of its own, so that a crash ends this process and not the caller: the
caller sees the pipe close, reports that document's abbreviations as unreadable and starts a
new worker for the next document.

Run as a script (``python ab3p_worker.py``), so it imports nothing of termnorm. Protocol on
standard input and output, each message a 4-byte big-endian length and that many bytes:
the caller sends a document's UTF-8 text; the worker answers JSON: ``{"ready": true}`` once
Ab3P is loaded (or ``{"error": ...}`` and exits), then ``{"pairs": [[short, long, precision],
...]}`` or ``{"error": ...}`` per document. Ab3P's own diagnostics (``Failed to find
sentence``) go to the null device, not to the caller's terminal.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from typing import IO, Any

HEADER = struct.Struct(">I")
"""A message's length prefix."""


def write_message(stream: IO[bytes], payload: bytes) -> None:
    """Send ``payload`` with its length prefix."""
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


def read_message(stream: IO[bytes]) -> bytes | None:
    """The next message, or ``None`` when the other side closed the stream."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    payload = stream.read(size)
    return payload if len(payload) == size else None


def _answer(out: IO[bytes], message: dict[str, Any]) -> None:
    write_message(out, json.dumps(message).encode("utf-8"))


def main() -> int:
    """Serve documents until standard input closes; 0 then, 1 when Ab3P cannot load."""
    out = os.fdopen(os.dup(1), "wb")  # the protocol's channel; fd 1 itself goes silent
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        import pyab3p

        ab3p = pyab3p.Ab3p()
    except Exception as exc:  # reported to the caller, which names the fix
        _answer(out, {"error": f"{type(exc).__name__}: {exc}"})
        return 1
    _answer(out, {"ready": True})
    while (payload := read_message(sys.stdin.buffer)) is not None:
        try:
            found = ab3p.get_abbrs(payload.decode("utf-8"))
            pairs = [[a.short_form, a.long_form, float(a.prec)] for a in found]
        except Exception as exc:  # one document's failure, reported with it
            _answer(out, {"error": f"{type(exc).__name__}: {exc}"})
            continue
        _answer(out, {"pairs": pairs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
