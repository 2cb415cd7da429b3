"""An encoder that encodes each distinct text once: later requests read a memo.

Research runs ask for the same texts many times (an index, MCSM, clustering and relation
tasks share a KG's terms; fourteen search strategies share the queries), so
:class:`MemoEncoder` sits in front of a :class:`~termnorm.encoders.TermEncoder` (or anything
with its ``encode`` signature and a ``dimension``) and sends it only texts it has not seen.
The vectors are the wrapped encoder's, unchanged; the memo grows for the wrapper's lifetime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from termnorm.encoders.pooling import Pooling
    from termnorm.encoders.protocols import Encoder

__all__ = ["MemoEncoder"]


class MemoEncoder:
    """Wraps ``encoder``; each distinct text is encoded once (see the module doc).

    ``path``, ``pooling``, ``max_length``, ``fingerprint`` and ``dimension`` are the wrapped
    encoder's (the memo changes no vector), so an index built through the memo carries the
    model's card.
    """

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.path: Path | None = encoder.path
        self.pooling: Pooling = encoder.pooling
        self.max_length: int = encoder.max_length
        self.memo: dict[str, np.ndarray] = {}

    @property
    def fingerprint(self) -> str:
        """The wrapped encoder's fingerprint (weights and pooling)."""
        return self.encoder.fingerprint

    @property
    def dimension(self) -> int:
        """Size of a vector."""
        return self.encoder.dimension

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 256,
        show_progress: bool = False,
        desc: str = "encoding",
        on_batch: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """float32 vectors ``[len(texts), dimension]`` in input order, as the wrapped
        encoder returns them; texts not seen before go to it in one call, each once (with
        ``on_batch``). Empty ``texts`` give an empty ``[0, dimension]`` array."""
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            vectors = self.encoder.encode(
                missing,
                batch_size=batch_size,
                show_progress=show_progress,
                desc=desc,
                on_batch=on_batch,
            )
            self.memo.update(zip(missing, np.asarray(vectors, dtype=np.float32), strict=True))
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        return np.stack([self.memo[t] for t in texts])
