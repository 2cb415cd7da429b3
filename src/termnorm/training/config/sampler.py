"""Settings of CODER's KG sampler (:class:`termnorm.training.sampler.KGSampler`), the batch
source of the CODER losses and MS v1–v3: group repeats, synonym and domain shares, hard
negatives."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from termnorm.training.config.base import Section, check_share, opt
from termnorm.training.config.shared import SharedConfig

__all__ = ["KGSamplerConfig", "check_batch_shape"]


def check_batch_shape(k: int, m: int, flag: str = "") -> None:
    """``ValueError`` unless 2 <= m <= sqrt(k) (so k >= 4); ``flag`` prefixes the names
    (``"--"`` in CLI messages)."""
    if k < 4:
        raise ValueError(f"{flag}k must be at least 4, as m >= 2 needs m*m <= k (got {k})")
    if m < 2 or m > math.isqrt(k):
        raise ValueError(
            f"{flag}m must satisfy 2 <= m <= sqrt(k) = {math.sqrt(k):.2f} (got m={m}, "
            f"k={k}); raise {flag}k or lower {flag}m"
        )


@dataclass
class KGSamplerConfig(Section):
    """How the KG sampler composes its 2k-term batches (``k`` is a shared setting)."""

    name: ClassVar[str] = "sampler"

    m: int = opt(2, "Repeats of each sampled triplet in a batch (2 <= m <= sqrt(k)).")
    synonym_share: float = opt(
        0.75,
        "Share of the k slots filled with synonym-only groups (1.0 without relations or "
        "with a synonym-only --loss).",
    )
    lang_balanced: bool = opt(False, "Draw a language first, then a term (multilingual KGs).")
    domain_share: float = opt(
        0.5,
        "--train-data od, CODER losses: share of synonym groups pairing training mentions "
        "with their concept's KG terms.",
    )
    hard_negatives: bool = opt(True, "Compose batches of concepts near each other (CODER++-style).")
    hard_share: float = opt(0.75, "Share of slots composed from near-concept clusters.")
    hard_refresh: int = opt(
        250, "Re-embed concept names every N steps to refresh neighbours.", min=1
    )
    hard_neighbours: int = opt(16, "Neighbours kept per concept.", min=1)
    hard_cluster: int = opt(4, "Concept groups per near-concept cluster.", min=2)
    hard_max_concepts: int = opt(
        10_000, "Concepts embedded per neighbour refresh (a new random subset each time)."
    )

    def validate(self, run: SharedConfig) -> None:
        """The batch shape (k, m) and the shares; the hard-negative settings when they are on."""
        check_batch_shape(run.k, self.m, "--")
        for name in ("synonym_share", "domain_share", "hard_share"):
            check_share(name, getattr(self, name))
        if self.hard_negatives:
            self.check_bounds()  # or pass --no-hard-negatives
