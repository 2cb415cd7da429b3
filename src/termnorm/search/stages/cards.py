"""Single-file JSON cards of the fitted recall and rank stages (hybrid weight, combiner).

A card is written atomically (a temporary file renamed over the target) and read back with
two checks: its ``kind`` and the identity of the index it was fitted on
(:func:`recall_identity`: KG and recall model fingerprints), which a ranker folder's card
records too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from termnorm.errors import ArtifactMismatchError
from termnorm.index.term_index import TermIndex
from termnorm.search.stages.fit_spec import TrainingDataSpec
from termnorm.search.strategies import parse_strategy

__all__ = [
    "fitted_index",
    "read_json_card",
    "recall_identity",
    "recall_settings",
    "write_json_card",
]


def recall_identity(index: TermIndex) -> dict[str, Any]:
    """What a ranker, hybrid or combiner card needs of an index: its KG and its recall model
    (fingerprints). Not the index's own identity (:func:`termnorm.search.identity.index_identity`,
    which a rebuild changes): a rebuilt index of the same KG and model serves the same ranker."""
    return {
        "kg_fingerprint": index.card["kg"]["fingerprint"],
        "model_fingerprint": index.card["model"]["fingerprint"],
        "pooling": index.card["model"]["pooling"],
    }


def fitted_index(index: TermIndex) -> dict[str, Any]:
    """A card's ``index`` entry: the folder (absolute) and its :func:`recall_identity`."""
    path = None if index.path is None else str(Path(index.path).resolve())
    return {"path": path, **recall_identity(index)}


def recall_settings(spec: TrainingDataSpec, index: TermIndex) -> dict[str, Any]:
    """What a hybrid or combiner card records of the recall and data it was fitted with."""
    return {
        "strategy": str(parse_strategy(spec.resolved_strategy)),
        "sieve_threshold": spec.sieve_threshold,
        "index": fitted_index(index),
        "training_data": [str(p) for p in spec.mentions],
        "synonyms": [str(p) for p in spec.synonyms],
        "cross_fitting": {"folds": spec.folds, "seed": spec.seed},
    }


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
