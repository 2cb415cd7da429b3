"""Single-file JSON cards of the fitted recall and rank stages (hybrid weight, combiner).

A card is written atomically (a temporary file renamed over the target) and read back with
two checks: its ``kind`` and the identity of the index it was fitted on
(:func:`~termnorm.search.rank.ranker.recall_identity`: KG and recall model fingerprints).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from termnorm.errors import ArtifactMismatchError
from termnorm.index.term_index import TermIndex

__all__ = ["read_json_card", "write_json_card"]


def write_json_card(path: str | Path, card: dict[str, Any]) -> Path:
    """Write ``card`` as pretty JSON to ``path`` (parents created, replaced atomically)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(card, indent=2) + "\n")
    tmp.replace(path)
    return path


def read_json_card(
    path: str | Path, kind: str, command: str, index: TermIndex | None = None
) -> dict[str, Any]:
    """The card at ``path``; :class:`~termnorm.errors.ArtifactMismatchError` when it is not a
    ``kind`` card or was fitted on an index other than ``index`` (``command`` names the
    ``termnorm`` command that writes one)."""
    from termnorm.search.rank.ranker import recall_identity

    card: dict[str, Any] = json.loads(Path(path).read_text())
    if card.get("kind") != kind:
        raise ArtifactMismatchError(
            f"{path} is not a {kind} card (kind {card.get('kind')!r}): write one with "
            f"'termnorm {command}'"
        )
    fitted = card.get("index", {})
    if index is not None and any(fitted.get(k) != v for k, v in recall_identity(index).items()):
        raise ArtifactMismatchError(
            f"the {kind} card {path} was fitted on the index {fitted.get('path')}, not this "
            f"one: fit it again with 'termnorm {command} --index INDEX'"
        )
    return card
