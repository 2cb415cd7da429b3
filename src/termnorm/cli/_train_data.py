"""``termnorm train --train-data o|od --mentions FILE…``: the training mentions, read once.

Mention files (any format ``termnorm eval`` reads) are read here, in the CLI layer, into
``(text, gold_ids)`` pairs. The triplet network takes them as Train:OD texts
(:mod:`termnorm.cli._triplet`); CODER's losses take them as extra KG terms
(:func:`with_domain_terms`).
"""

from __future__ import annotations

from typing import Any

from termnorm.training.config import TrainConfig

__all__ = ["read_train_mentions", "with_domain_terms"]


def read_train_mentions(config: TrainConfig) -> list[tuple[str, tuple[str, ...]]]:
    """The ``--mentions`` pairs; ``--mentions`` with ``--train-data o`` is an error."""
    from termnorm.mentions.synonyms import read_synonyms
    from termnorm.training.triplet_data import TrainData

    if TrainData(config.train_data) is TrainData.O and config.mentions:
        raise ValueError("--mentions is for --train-data od; drop it or pass --train-data od")
    return [p for path in config.mentions for p in read_synonyms(path, config.mentions_format)]


def with_domain_terms(config: TrainConfig, graph: Any) -> Any:
    """``graph`` plus the ``--mentions`` as domain terms for ``--train-data od``, else as is."""
    from termnorm.training.domain_terms import add_domain_terms
    from termnorm.training.triplet_data import TrainData

    pairs = read_train_mentions(config)
    if TrainData(config.train_data) is TrainData.O:
        return graph
    if not pairs:
        raise ValueError("--train-data od needs annotated training mentions (--mentions FILE)")
    return add_domain_terms(graph, pairs)
