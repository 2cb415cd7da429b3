"""What a run trains on besides the KG: the annotated training mentions of ``--train-data od``.

Mentions come from ``config.mentions`` (files in any format ``termnorm eval`` reads, read
with :func:`termnorm.mentions.read_synonyms`: composite mentions with parts become one pair
per part) or, from Python, as ``(text, gold_ids)`` pairs. The triplet network takes them as
Train:OD texts (:func:`termnorm.training.triplet_data.build_triplet_corpus`); CODER's losses
take them as extra terms of their concepts (:func:`with_domain_terms`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from termnorm.kg import KnowledgeGraph
from termnorm.mentions import read_mentions, read_synonyms
from termnorm.training.config import LossKind, TrainConfig, TrainData
from termnorm.training.domain_terms import add_domain_terms

__all__ = ["MentionPair", "training_mentions", "with_domain_terms"]

MentionPair = tuple[str, Sequence[str]]
"""A training mention: its text and gold concept IDs."""


def training_mentions(
    config: TrainConfig, mentions: Iterable[MentionPair] | None = None
) -> list[MentionPair]:
    """The training mentions: ``mentions`` when given, else those of the ``config.mentions``
    files (``config.mentions_format``, detected when ``None``).

    ``--loss mtcg`` reads every mention whole, its full gold set kept (a composite mention
    is one pair with several IDs: the implication-number head learns from it); the other
    objectives take composite mentions split into their parts where the dataset gives them.

    Raises:
        ValueError: mentions with ``--train-data o`` (they would be ignored; ``--loss mtcg``
            always uses them), or mentions given both ways.
    """
    if mentions is not None and config.mentions:
        raise ValueError(
            "training mentions given twice: as --mentions files in the config and as pairs; "
            "pass one of them"
        )
    mtcg = config.loss is LossKind.MTCG
    if config.train_data is TrainData.O and (config.mentions or mentions) and not mtcg:
        raise ValueError("--mentions is for --train-data od; drop it or pass --train-data od")
    if mentions is not None:
        return list(mentions)
    if mtcg:
        return [
            (m.text, m.gold_ids)
            for path in config.mentions
            for m in read_mentions(path, config.mentions_format)
        ]
    return [p for path in config.mentions for p in read_synonyms(path, config.mentions_format)]


def with_domain_terms(
    config: TrainConfig, kg: KnowledgeGraph, mentions: Sequence[MentionPair]
) -> KnowledgeGraph:
    """``kg`` plus the mentions as domain terms for ``--train-data od`` (see
    :func:`~termnorm.training.domain_terms.add_domain_terms`), else ``kg`` as is."""
    if config.train_data is TrainData.O:
        return kg
    if not mentions:
        raise ValueError("--train-data od needs annotated training mentions (--mentions FILE)")
    return add_domain_terms(kg, mentions)
