"""Where a ranked matcher's implication numbers come from (multi-code output).

:class:`ImplicationLike` is all the ranking stage needs: ``predict(texts)`` → one number of
codes per text (int64: 1, 2, or 3 for "3 or more"). The real predictor is the implication
head of a multi-task candidate generator (``termnorm train --objective mtcg``), read by
``termnorm.encoders.implication.load_implication_predictor``; tests pass a fake.

:func:`resolve_implication` applies the product rule of ``--multi``: the head of the recall
model (the index's encoder folder) when it has one, else the model folder given with
``--implication``, else a refusal that says how to get one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from termnorm.encoders.implication import IMPLICATION_DIR, has_implication_head
from termnorm.errors import ArtifactMismatchError

if TYPE_CHECKING:
    from termnorm.index.term_index import TermIndex

__all__ = [
    "HEAD_DIR",
    "ImplicationLike",
    "index_implication",
    "load_implication",
    "resolve_implication",
]

HEAD_DIR = IMPLICATION_DIR
"""Folder of the implication head inside a sentence-transformers model folder."""


@runtime_checkable
class ImplicationLike(Protocol):
    """Predicts how many codes each text needs."""

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """int64 ``[len(texts)]`` with values 1, 2 or 3 (3: three or more)."""
        ...


def load_implication(model_dir: Path) -> ImplicationLike:
    """The implication predictor of ``model_dir`` (its ``implication_head/``).

    Raises:
        ArtifactMismatchError: the folder has no implication head.
    """
    from termnorm.encoders.implication import load_implication_predictor

    return load_implication_predictor(Path(model_dir))


def resolve_implication(recall_model: Path | None, implication: Path | None) -> ImplicationLike:
    """The predictor ``--multi`` uses (module doc)."""
    if recall_model is not None and has_implication_head(recall_model):
        return load_implication(Path(recall_model))
    if implication is not None:
        return load_implication(Path(implication))
    raise ArtifactMismatchError(
        "--multi needs an implication-number predictor: the index's recall model has no "
        f"{HEAD_DIR}/; train one with 'termnorm train --objective mtcg' and index with it, or "
        "pass --implication MODEL (a model folder with an implication head)"
    )


def index_implication(index: TermIndex | None, implication: Path | None) -> ImplicationLike:
    """:func:`resolve_implication` with the recall model named in ``index``'s card: the one
    lookup the faces share (CLI ``--multi``, the API, the service)."""
    path = index.card.get("model", {}).get("path") if index is not None else None
    return resolve_implication(Path(path) if path else None, implication)
