"""What a matcher's answers depend on, as plain JSON data (a resumable job's record).

:func:`canonical` turns dataclasses, enums, sets and mappings into JSON data independent of
hash order; :func:`index_identity` is an index's identity from its card. Each matcher's own
``identity()`` (the :class:`~termnorm.search.candidate.RowMatcher` protocol) builds on them.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["canonical", "index_identity"]


def canonical(value: Any) -> Any:
    """``value`` as plain JSON data, independent of hash order (sets sorted)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return canonical(value.value)
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((canonical(v) for v in value), key=json.dumps)
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def index_identity(index: object) -> dict[str, Any]:
    """An index's identity from its card (``index.card``, or the card itself): when it was
    built, the model and KG fingerprints, its counts and (once saved) its tables' content
    hashes."""
    card = index if isinstance(index, Mapping) else getattr(index, "card", None)
    if not isinstance(card, Mapping):
        return {"object": type(index).__qualname__}
    return canonical(
        {
            "created": card.get("created"),
            "model": card.get("model", {}).get("fingerprint"),
            "kg": card.get("kg", {}).get("fingerprint"),
            "counts": card.get("counts"),
            "tables": card.get("tables"),
        }
    )
