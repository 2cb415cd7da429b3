"""What a matcher's answers depend on, as plain JSON data (a resumable job's record).

:func:`canonical` turns dataclasses, enums, sets and mappings into JSON data independent of
hash order; :func:`index_identity` is an index's identity from its card; :func:`matcher_model`
the encoder folder a matcher queries with. Each matcher's own
``identity()`` (the :class:`~termnorm.search.candidate.RowMatcher` protocol) builds on them.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["canonical", "index_identity", "matcher_model"]


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


def matcher_model(matcher: object) -> Path | None:
    """The encoder folder of ``matcher``: its encoder's ``path``, else its index card's model
    path, else those of the matcher it wraps (a stage's ``recall``, a context's ``matcher``);
    ``None`` when none has one (a test double)."""
    seen: object | None = matcher
    while seen is not None:
        path = getattr(getattr(seen, "encoder", None), "path", None)
        card = getattr(getattr(seen, "index", None), "card", None)
        if path is None and isinstance(card, Mapping):
            path = card.get("model", {}).get("path")
        if path is not None:
            return Path(path)
        seen = getattr(seen, "recall", None) or getattr(seen, "matcher", None)
    return None
