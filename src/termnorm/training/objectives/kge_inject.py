"""``--loss kge-inject``: KGE injection pre-training, L_MLM + L_EL over ``--corpus`` passages
with ``--kge`` entities injected (:mod:`termnorm.training.kge_injection`): its settings (where
the entities are injected, how many, masking and passages) and its entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from termnorm.training.config.base import Section, opt
from termnorm.training.config.shared import LossKind, SharedConfig
from termnorm.training.objectives.base import objective

__all__ = ["ENTRY", "InjectionConfig"]


@dataclass
class InjectionConfig(Section):
    """``L_MLM + L_EL`` over corpus passages whose mentions get KGE entities injected."""

    name: ClassVar[str] = "injection"

    inject_layer: int = opt(
        4,
        "--loss kge-inject: inject after this transformer layer (the paper: 8 of BERT's "
        "12; 4 of MiniLM's 6).",
    )
    inject_candidates: int = opt(
        10, "--loss kge-inject: entities n the linker mixes per mention.", min=1
    )
    mlm_probability: float = opt(
        0.15, "--loss kge-inject: share of tokens masked (whole mentions)."
    )
    passage_length: int = opt(96, "--loss kge-inject: max tokens per training passage.")
    passages_per_batch: int = opt(
        6, "--loss kge-inject: passages per batch (the paper's 6).", min=1
    )

    def validate(self, run: SharedConfig) -> None:
        """The bounds; with ``--loss kge-inject`` a corpus, a masking share and the layer."""
        self.check_bounds()
        if run.loss is not LossKind.KGE_INJECT:
            return
        if not run.corpus:
            raise ValueError(
                "--loss kge-inject needs --corpus FILE (text in which KG terms are "
                "matched: PubTator abstracts, or --corpus-format text)"
            )
        if not 0.0 < self.mlm_probability < 1.0:
            raise ValueError(f"--mlm-probability must be in (0, 1) (got {self.mlm_probability})")
        if self.inject_layer < 1 or self.passage_length < 8:
            raise ValueError("--inject-layer must be >= 1 and --passage-length >= 8")


ENTRY = objective(
    LossKind.KGE_INJECT,
    "termnorm.training.kge_injection:kge_injection_trainer",
    InjectionConfig,
    reads=("kge", "corpus", "corpus_format", "relation_lr"),
    help="KGE injection pre-training: L_MLM + L_EL over corpus passages",
)
