"""The frozen teacher of multilingual knowledge distillation: which model it is, and its
vectors of the English names, computed once and cached.

The teacher's vectors live in the space the trainer gives the student's: the transformer's
last hidden states pooled as the folder pools, un-normalised, without a Dense head
(:class:`termnorm.training.model.EncoderAndObjective`). They are cached as ``.npy`` files
under ``<cache>/distill-teacher/`` keyed by the teacher's fingerprint, pooling, max length
and the texts, so a second run (or a resumed one) on the same KG does not encode them again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from termnorm.encoders import TermEncoder, default_model_path
from termnorm.encoders.pooling import pool
from termnorm.encoders.vocabulary import CARD_NAME as EXTENSION_CARD
from termnorm.errors import ArtifactMismatchError
from termnorm.paths import cache_dir, writing

__all__ = ["CACHE_FOLDER", "resolve_teacher", "teacher_vectors"]

logger = logging.getLogger(__name__)

CACHE_FOLDER = "distill-teacher"


def resolve_teacher(teacher: Path | None, base_model: Path | None) -> Path:
    """The teacher's folder: ``teacher`` when given; else the model ``base_model`` was
    extended from (its ``vocabulary_extension.json``); else ``base_model``; else the
    built-in all-MiniLM-L6-v2.

    Raises:
        ArtifactMismatchError: the extension card names a base model folder that is gone
            (pass ``--teacher``).
    """
    if teacher is not None:
        return Path(teacher)
    if base_model is None:
        return default_model_path()
    card = Path(base_model) / EXTENSION_CARD
    if not card.is_file():
        return Path(base_model)
    source = Path(json.loads(card.read_text(encoding="utf-8"))["base_model"])
    if not source.is_dir():
        raise ArtifactMismatchError(
            f"{card} says {base_model} was extended from {source}, which is not a folder "
            "here: pass --teacher MODEL_DIR, the model the extension started from"
        )
    return source


def _cache_key(encoder: TermEncoder, texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    head = [encoder.fingerprint, str(encoder.pooling), str(encoder.max_length), str(len(texts))]
    for part in [*head, *texts]:
        digest.update(part.encode("utf-8") + b"\x00")
    return digest.hexdigest()[:32]


@torch.inference_mode()
def _pooled(encoder: TermEncoder, texts: Sequence[str], batch_size: int) -> np.ndarray:
    """Pooled, un-normalised float32 vectors ``[n, H]`` of ``texts`` (module doc)."""
    encoder.model.eval()
    out = np.empty((len(texts), int(encoder.model.config.hidden_size)), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        chunk = list(texts[start : start + batch_size])
        tokens = encoder.tokenize(chunk)
        hidden = encoder.model(**tokens).last_hidden_state  # [B, T, H]
        vectors = pool(hidden, encoder.pooling_mask(tokens), encoder.pooling)  # [B, H]
        out[start : start + len(chunk)] = vectors.float().cpu().numpy()
    return out


def teacher_vectors(
    encoder: TermEncoder, texts: Sequence[str], batch_size: int = 256, cache: bool = True
) -> np.ndarray:
    """The teacher's vectors ``[len(texts), H]`` of ``texts`` (module doc), read from the cache
    when ``cache`` and a previous run stored them, else encoded (and stored)."""
    path = cache_dir() / CACHE_FOLDER / f"{_cache_key(encoder, texts)}.npy"
    if cache and path.is_file():
        vectors = np.load(path)
        if vectors.shape[0] == len(texts):
            logger.info("teacher vectors of %d names read from %s", len(texts), path)
            return np.asarray(vectors, dtype=np.float32)
    logger.info("teacher: encoding %d English names once", len(texts))
    vectors = _pooled(encoder, texts, batch_size)
    if cache:
        with writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.stem}.{os.getpid()}.npy")
            np.save(tmp, vectors)
            tmp.replace(path)  # atomic: a reader sees the whole file or none
    return vectors
