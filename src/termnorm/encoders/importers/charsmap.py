"""A SentencePiece ``precompiled_charsmap`` built from a per-code-point normalization map.

``tokenizers``' ``Precompiled`` normalizer reads this blob: a little-endian ``u32`` byte size
of a darts-clone double-array trie, the trie's ``u32`` units, then the replacement strings,
each ended by ``\\0``. The trie maps the UTF-8 bytes of a key to the byte offset of its
replacement. This module writes such a blob for single-code-point keys (what a SentencePiece
model's rule table holds once its multi-code-point rules are dropped).

Unit layout (darts-clone): bits 0-7 the label, bit 8 "has a value", bits 10-31 the offset of
the children's block (bit 9: the offset is shifted left by 8); a value unit is
``value | 1 << 31``, stored at the node's child with label 0. Child positions are
``position ^ offset ^ label``; every node owns its own block base, so a missing child never
reads as present.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

__all__ = ["build_charsmap", "charsmap_lookup"]

_VALUE_FLAG = 1 << 31
_HAS_LEAF = 1 << 8
_MAX_DIRECT_OFFSET = 1 << 21


def build_charsmap(rules: Mapping[str, str]) -> bytes:
    """The ``precompiled_charsmap`` that replaces each key of ``rules`` by its value.

    Keys are single code points (longer keys are refused, as are empty and NUL ones); a
    value may be empty (the code point is deleted).

    Raises:
        ValueError: a key that is not one code point, or a NUL key or replacement.
    """
    strings = bytearray()
    offsets: dict[str, int] = {}
    root: dict[int, object] = {}
    for key in sorted(rules):
        if len(key) != 1 or key == "\0":
            raise ValueError(f"charsmap keys are single non-NUL code points, not {key!r}")
        value = rules[key]
        if "\0" in value:
            raise ValueError(f"the replacement of {key!r} holds NUL")
        if value not in offsets:
            offsets[value] = len(strings)
            strings += value.encode("utf-8") + b"\0"
        node = root
        for byte in key.encode("utf-8"):
            node = node.setdefault(byte, {})  # type: ignore[assignment]
        node[0] = offsets[value]  # the terminator holds the value
    units = _double_array(root)
    blob = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(blob)) + blob + bytes(strings)


def _double_array(root: dict[int, object]) -> list[int]:
    """darts-clone units of the byte trie ``root`` (label 0 children hold values)."""
    units = [0] * 512
    used = bytearray(512)  # positions taken
    bases: set[int] = set()
    used[0] = 1  # the root
    queue: list[tuple[int, dict[int, object]]] = [(0, root)]
    next_free = 1
    while queue:
        position, node = queue.pop(0)
        labels = sorted(node)
        base = _find_base(labels, used, bases, next_free)
        bases.add(base)
        while len(units) <= (base | 0xFF):
            units.extend([0] * len(units))
            used.extend(bytes(len(used)))
        offset = position ^ base
        if offset >= _MAX_DIRECT_OFFSET:
            raise ValueError("the normalization map is too large for a direct-offset trie")
        units[position] = (units[position] & (_HAS_LEAF | 0xFF)) | (offset << 10)
        if 0 in node:
            units[position] |= _HAS_LEAF
        for label in labels:
            child = base ^ label
            used[child] = 1
            if label == 0:
                units[child] = _VALUE_FLAG | int(node[0])  # type: ignore[call-overload]
            else:
                units[child] = label
                queue.append((child, node[label]))  # type: ignore[arg-type]
        while next_free < len(used) and used[next_free]:
            next_free += 1
    last = max(i for i, u in enumerate(used) if u)
    return units[: last + 1]


def _find_base(labels: list[int], used: bytearray, bases: set[int], start: int) -> int:
    """The smallest block base from ``start`` on whose slots ``base ^ label`` are all free
    and that no other node owns."""
    base = start ^ labels[0]  # the first free slot takes the first label
    while True:
        if base > 0 and base not in bases:
            slots = [base ^ label for label in labels]
            if all(slot >= len(used) or not used[slot] for slot in slots):
                return base
        base += 1


def charsmap_lookup(charsmap: bytes, char: str) -> str | None:
    """The replacement ``charsmap`` holds for the one code point ``char`` (``None``: kept).

    The walk ``tokenizers``' ``Precompiled`` normalizer does (its first prefix match);
    used to check a written map."""
    (size,) = struct.unpack_from("<I", charsmap, 0)
    units = struct.unpack_from(f"<{size // 4}I", charsmap, 4)
    strings = charsmap[4 + size :]
    position = _offset(units[0])
    for byte in char.encode("utf-8"):
        position ^= byte
        if position >= len(units) or units[position] & (_VALUE_FLAG | 0xFF) != byte:
            return None
        unit = units[position]
        position ^= _offset(unit)
        if unit & _HAS_LEAF:
            start = units[position] & (_VALUE_FLAG - 1)
            end = strings.index(b"\0", start)
            return strings[start:end].decode("utf-8")
    return None


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)
