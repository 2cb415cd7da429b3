"""``--loss mtcg``: the multi-task candidate generator, mention triplets + the implication-number
head (:mod:`termnorm.training.mtcg`; the head trains at ``--relation-lr``): its settings (the
negative strategy, the mention batches, the triplet margin and the implication head's loss) and
its entry."""

# opt() returns a dataclasses.Field, as field() does: no shared mutable default
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import ClassVar

from termnorm.training.config.base import Section, opt
from termnorm.training.config.shared import LossKind, SharedConfig
from termnorm.training.objectives.base import objective

__all__ = ["ENTRY", "ImplicationWeighting", "MtcgConfig", "NegativeKind"]


class NegativeKind(str, Enum):
    """How ``--loss mtcg`` picks the k_n negative terms of a training mention (Liang et al.
    2021, section 3.1.2; modules in :mod:`termnorm.training.negatives`)."""

    ONLINE = "online"  # top-k_n wrong concepts of the current model, re-mined every epoch
    RANDOM = "random"  # uniformly drawn wrong concepts, new ones every epoch
    TFIDF = "tfidf"  # the k_n wrong concepts nearest by char 3-gram TF-IDF (fixed)
    TREE = "tree"  # siblings and cousins of the gold concept through is_a edges
    KEYWORD = "keyword"  # the gold name with a site or type keyword swapped (--keywords)


class ImplicationWeighting(str, Enum):
    """Class weights of the implication-number cross-entropy (:mod:`termnorm.losses.implication`)."""

    BALANCED = "balanced"  # w_c = N / (C n_c) from the training items (termnorm's default)
    NONE = "none"  # the paper's plain mean


@dataclass
class MtcgConfig(Section):
    """``--loss mtcg``: triplet loss over (mention, gold, negative) + implication-number loss."""

    name: ClassVar[str] = "mtcg"

    negatives: NegativeKind = opt(
        NegativeKind.ONLINE,
        "--loss mtcg: negative strategy: online (the current model's top wrong concepts, "
        "re-mined each epoch, random in epoch 1), random, tfidf (char 3-gram TF-IDF "
        "nearest), tree (is_a siblings/cousins) or keyword (a site/type keyword of the "
        "gold name swapped; needs --keywords).",
    )
    negatives_per_mention: int = opt(
        4, "--loss mtcg: k_n, negatives per (mention, gold) pair (paper: 4).", min=1
    )
    mention_batch: int = opt(
        16,
        "--loss mtcg: (mention, gold concept) pairs per micro-batch; each brings its gold "
        "name and k_n negatives, so a batch encodes (2 + k_n) texts per pair.",
        min=1,
    )
    triplet_margin: float = opt(
        1.0, "--loss mtcg: margin of the Euclidean triplet loss (paper: 1)."
    )
    implication_weight: float = opt(
        1.0,
        "--loss mtcg: weight of the implication-number cross-entropy (paper: 1, a plain sum).",
        min=0,
    )
    implication_class_weights: ImplicationWeighting = opt(
        ImplicationWeighting.BALANCED,
        "--loss mtcg: class weights of the implication cross-entropy: balanced "
        "(N / (C n_c) from the training items, so rare 2- and 3+-code mentions count) or "
        "none (the paper's plain mean, which learns 'one code' for everything on "
        "NCBI-disease's 1,628 : 70 : 7).",
    )
    keywords: Path | None = opt(
        None,
        "--negatives keyword: keyword vocabulary, a TSV with header 'keyword<TAB>kind' "
        "(kind site or type), '#' comment lines.",
        exists="path",
    )

    def validate(self, run: SharedConfig) -> None:
        """Checked with ``--loss mtcg`` only (the other objectives do not read them)."""
        if run.loss is not LossKind.MTCG:
            return
        self.check_bounds()
        if self.triplet_margin <= 0:
            raise ValueError(f"--triplet-margin must be > 0 (got {self.triplet_margin})")
        if self.negatives is NegativeKind.KEYWORD and self.keywords is None:
            raise ValueError(
                "--negatives keyword needs --keywords FILE, a TSV of 'keyword<TAB>kind' "
                "rows (kind site or type)"
            )


ENTRY = objective(
    LossKind.MTCG,
    "termnorm.training.mtcg:mtcg_trainer",
    MtcgConfig,
    reads=("relation_lr",),
    help="multi-task candidate generator: mention triplets + implication-number head",
)
