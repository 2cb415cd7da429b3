"""A trained ranker folder: the cross-encoder, its keyword file and its card.

Folder layout (written atomically by :func:`save_ranker`)::

    ranker.json          the card: base model (path, fingerprint), the index and recall model
                         that produced the training candidates, strategy, k_c, keyword file
                         hash, training data, training settings, held-out documents, the
                         stacked combiner fitted on them (plain numbers), metrics, versions
    keywords.tsv         the keyword vocabulary it was trained with (absent when plain)
    cross_encoder.json + the model (:mod:`termnorm.search.stages.ranker.cross_encoder`): a plain
                         ranker is a standard sentence-transformers CrossEncoder folder
                         (:mod:`~termnorm.search.stages.ranker.standard_folder`), a keyword-attentive
                         one has ``model/`` and ``head.safetensors``

:func:`load_ranker` reads it back as a :class:`Ranker`; :meth:`Ranker.check_index` refuses an
index other than the one its candidates came from (another KG or another recall model gives
candidates the ranker never learned to order).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from termnorm._artifacts import atomic_dir, file_sha256, read_versioned_card, write_card
from termnorm._version import __version__
from termnorm.encoders.forward import check_threads, torch_threads
from termnorm.errors import ArtifactMismatchError
from termnorm.index.term_index import TermIndex
from termnorm.kg.keywords import KeywordVocabulary, read_keywords
from termnorm.search.candidate import Candidate
from termnorm.search.stages.cards import recall_identity
from termnorm.search.stages.combiner.model import Combiner
from termnorm.search.stages.ranker.cross_encoder import KeywordCrossEncoder
from termnorm.search.stages.ranker.texts import candidate_text

__all__ = [
    "CARD_NAME",
    "KEYWORDS_FILE",
    "RANKER_FORMAT",
    "Ranker",
    "load_ranker",
    "recall_identity",
    "save_ranker",
]

CARD_NAME = "ranker.json"
KEYWORDS_FILE = "keywords.tsv"
RANKER_FORMAT = 1
DEFAULT_PAIRS_PER_PASS = 128


def _identity_text(identity: dict[str, Any]) -> str:
    """``KG <fingerprint>, model <fingerprint[:12]> (<pooling>)``; a missing one says so."""
    kg = identity.get("kg_fingerprint") or "none (an index of an unsaved KG)"
    model = str(identity.get("model_fingerprint") or "none")[:12]
    return f"KG {kg}, model {model} ({identity.get('pooling') or '?'} pooling)"


class Ranker:
    """A loaded ranker: scores a mention's candidates, all of them in one forward pass, on
    ``threads`` intra-op threads of torch (``None``: torch's setting), restored after it."""

    def __init__(
        self,
        model: KeywordCrossEncoder,
        card: dict[str, Any],
        path: Path | None = None,
        threads: int | None = None,
    ) -> None:
        self.model = model
        self.card = card
        self.path = path
        self.threads = check_threads(threads)

    @property
    def plain(self) -> bool:
        """Whether this is the plain cross-encoder (no keyword tokens)."""
        return self.model.plain

    @property
    def name(self) -> str:
        """``kar`` (keyword-attentive) or ``bert-rank`` (plain)."""
        return "bert-rank" if self.plain else "kar"

    @property
    def combiner(self) -> Combiner | None:
        """The learned combiner ``termnorm rank train --holdout`` fitted on the held-out
        documents with this ranker's scores (``None`` when the folder has none)."""
        stacked = self.card.get("combiner")
        return None if not stacked else Combiner.from_dict(stacked["combiner"])

    def check_index(self, index: TermIndex) -> None:
        """Refuse ``index`` when it is not the one the training candidates came from."""
        trained = self.card.get("index", {})
        mine = recall_identity(index)
        keys = ("kg_fingerprint", "model_fingerprint", "pooling")
        if any(trained.get(k) != mine[k] for k in keys):
            raise ArtifactMismatchError(
                f"the ranker {self.path or ''} was trained on candidates of the index "
                f"{trained.get('path')} ({_identity_text(trained)}), but this index has "
                f"{_identity_text(mine)}: train a ranker for this index with "
                "'termnorm rank train --index INDEX'"
            )

    def score(self, mention: str, candidates: Sequence[Candidate]) -> np.ndarray:
        """Probabilities ``[len(candidates)]`` (float64) of each candidate being the
        mention's concept, the pairs scored in one batch."""
        return self.score_batch([mention], [candidates])[0]

    def score_batch(
        self,
        mentions: Sequence[str],
        candidate_lists: Sequence[Sequence[Candidate]],
        pairs_per_pass: int = DEFAULT_PAIRS_PER_PASS,
    ) -> list[np.ndarray]:
        """:meth:`score` for each mention; whole mentions are packed into passes of about
        ``pairs_per_pass`` pairs (a mention's pairs are never split)."""
        if len(mentions) != len(candidate_lists):
            raise ValueError(f"{len(mentions)} mentions but {len(candidate_lists)} lists")
        out: list[np.ndarray] = [np.zeros(0) for _ in mentions]
        pending: list[int] = []
        size = 0
        for i, candidates in enumerate(candidate_lists):
            if not candidates:
                continue
            if pending and size + len(candidates) > pairs_per_pass:
                self._score_group(mentions, candidate_lists, pending, out)
                pending, size = [], 0
            pending.append(i)
            size += len(candidates)
        if pending:
            self._score_group(mentions, candidate_lists, pending, out)
        return out

    def _score_group(
        self,
        mentions: Sequence[str],
        candidate_lists: Sequence[Sequence[Candidate]],
        rows: list[int],
        out: list[np.ndarray],
    ) -> None:
        left = [mentions[i] for i in rows for _ in candidate_lists[i]]
        right = [candidate_text(c) for i in rows for c in candidate_lists[i]]
        with torch_threads(self.threads):
            probs = self.model.predict(left, right, batch_size=len(left)).numpy()
        start = 0
        for i in rows:
            n = len(candidate_lists[i])
            out[i] = probs[start : start + n].astype(np.float64)
            start += n


def save_ranker(
    model: KeywordCrossEncoder,
    card: dict[str, Any],
    out: str | Path,
    keywords_file: str | Path | None = None,
) -> Path:
    """Write a ranker folder (module doc) atomically; ``keywords_file`` is copied in (its
    hash goes to the card) unless the model is plain. Returns the folder."""
    if not model.plain and keywords_file is None:
        raise ValueError("a keyword-attentive ranker is saved with its keyword file")
    full = {
        "format_version": RANKER_FORMAT,
        "termnorm_version": __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "kind": "bert-rank" if model.plain else "kar",
        **card,
    }
    with atomic_dir(out) as tmp:
        model.save(tmp)
        if keywords_file is not None and not model.plain:
            data = Path(keywords_file).read_bytes()
            (tmp / KEYWORDS_FILE).write_bytes(data)
            full["keywords"] = {
                "file": str(keywords_file),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        write_card(tmp, CARD_NAME, full)
    return Path(out)


def load_ranker(
    path: str | Path, device: str | torch.device | None = None, threads: int | None = None
) -> Ranker:
    """The ranker of a folder :func:`save_ranker` wrote.

    ``threads``: torch's intra-op threads while the ranker scores, restored after each call
    (``None``: unchanged); loading leaves the process's setting as it is.

    Raises:
        ArtifactMismatchError: not a ranker folder, a format this termnorm does not read, or
            a keyword file whose hash is not the card's.
    """
    folder = Path(path)
    make = "termnorm rank train --index INDEX --mentions TRAIN --out RANKER"
    card = read_versioned_card(folder, CARD_NAME, "rank", "ranker", RANKER_FORMAT, make)
    keywords: KeywordVocabulary | None = None
    if card.get("kind") == "kar":
        keyword_path = folder / KEYWORDS_FILE
        if not keyword_path.is_file():
            raise ArtifactMismatchError(f"{folder} has no {KEYWORDS_FILE}: retrain the ranker")
        expected = card.get("keywords", {}).get("sha256")
        if expected != file_sha256(keyword_path, chars=64):
            raise ArtifactMismatchError(
                f"{keyword_path} is not the keyword file the ranker was trained with "
                f"(sha256 differs from the card's {expected}); restore it or retrain"
            )
        keywords = read_keywords(keyword_path)
    model = KeywordCrossEncoder.load(folder, keywords, device)
    return Ranker(model, card, folder, threads)
