"""Dev evaluation of an encoder during training: index a KG with its current weights, normalize
dev mentions, report acc@1/acc@5/MRR.

``DevEvaluator(kg, mentions)(encoder)`` returns the :class:`NormalizationEvaluator` metrics
prefixed with the evaluator's name (``dev_acc@1``, ...); ``primary_metric`` (``dev_acc@1``)
is the one the trainer keeps the best model by. :func:`termnorm.train` builds it from
``--dev``/``--dev-format``/``--dev-kg`` and hands it to the trainer (training sits below
indexing and search, so it cannot build one itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from termnorm.encoders import TermEncoder
from termnorm.evaluation.normalization import NormalizationEvaluator
from termnorm.kg import KnowledgeGraph
from termnorm.mentions import Mention, MentionFormat, read_mentions

__all__ = ["DEV_KS", "DevEvaluator"]

DEV_KS = (1, 5)


class DevEvaluator:
    """``encoder -> metrics`` on dev mentions normalized against ``kg`` (see module doc).

    Args:
        kg: the KG whose terms the mentions are matched to.
        mentions: the dev mentions.
        name: metric-name prefix.
    """

    def __init__(self, kg: KnowledgeGraph, mentions: Iterable[Mention], name: str = "dev") -> None:
        self.kg = kg
        self.scorer = NormalizationEvaluator(mentions, ks=DEV_KS, name=name)

    @classmethod
    def from_file(
        cls,
        kg: KnowledgeGraph,
        path: str | Path,
        format: MentionFormat | str | None,
        name: str = "dev",
    ) -> DevEvaluator:
        """The evaluator of a mention file (any format ``termnorm eval`` reads)."""
        return cls(kg, read_mentions(path, format), name)

    @property
    def primary_metric(self) -> str:
        """``{name}_acc@1``."""
        return self.scorer.primary_metric

    def __call__(self, encoder: TermEncoder) -> dict[str, float]:
        """Metrics of ``encoder``'s current weights: an O-T search of the KG's terms encoded
        now (exact backend, no progress)."""
        from termnorm.index import TermIndex
        from termnorm.search.normalizer import Normalizer

        index = TermIndex.build(self.kg, encoder, backend="exact", show_progress=False)
        return self.scorer(Normalizer(index, encoder))
