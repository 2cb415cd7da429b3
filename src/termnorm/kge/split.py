"""The paper's triple split: 90 % training, 6 % test, 4 % validation, with every entity and
relation of the validation and test parts seen in training.

PyKEEN's ``TriplesFactory.split`` with its default *coverage* splitter does this: it first puts
a greedy cover of the triples into training (one triple per relation, then one per entity not
yet covered), then splits the remaining triples at random (seeded) so that the part sizes are
exactly ``⌊cumulative ratio × n⌋`` differences. A KG whose cover does not fit into the training
share is refused with a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from termnorm.errors import EmptyResultError
from termnorm.kg import KnowledgeGraph
from termnorm.kge._pykeen import require_pykeen

__all__ = [
    "PARTS",
    "TripleSplit",
    "kg_triples",
    "sample_triples",
    "split_triples",
    "with_reciprocal_relations",
]

PARTS = ("train", "valid", "test")


@dataclass
class TripleSplit:
    """PyKEEN triples factories of the three parts (one entity/relation id mapping)."""

    train: Any
    valid: Any
    test: Any
    duplicates_dropped: int = 0

    def sizes(self) -> dict[str, int]:
        """Triples per part."""
        return {part: int(getattr(self, part).num_triples) for part in PARTS}

    def labeled(self) -> pd.DataFrame:
        """``head, relation, tail, part`` rows of all three parts (the split on disk)."""
        frames = []
        for part in PARTS:
            factory = getattr(self, part)
            # label_triples, not .triples: that property warns on every call
            labels = factory.label_triples(factory.mapped_triples)  # [n, 3] str
            frame = pd.DataFrame(labels, columns=["head", "relation", "tail"])
            frame["part"] = part
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)


def kg_triples(kg: KnowledgeGraph) -> tuple[np.ndarray, int]:
    """The KG's distinct ``(head, relation, tail)`` as a ``[n, 3]`` str array, and the number
    of repeated rows dropped."""
    rel = kg.relations[["head", "relation", "tail"]].astype(str)
    distinct = rel.drop_duplicates()
    return distinct.to_numpy(dtype=str), len(rel) - len(distinct)


def split_triples(
    kg: KnowledgeGraph, valid_fraction: float = 0.04, test_fraction: float = 0.06, seed: int = 0
) -> TripleSplit:
    """Split the KG's relation table into train/valid/test factories (see the module doc)."""
    require_pykeen()
    from pykeen.triples import TriplesFactory
    from pykeen.triples.splitting import get_absolute_split_sizes

    triples, dropped = kg_triples(kg)
    n = len(triples)
    ratios = [1.0 - valid_fraction - test_fraction, valid_fraction, test_fraction]
    if n == 0 or min(get_absolute_split_sizes(n_total=n, ratios=ratios)) < 1:
        raise EmptyResultError(
            f"the KG has {n} distinct relation triples, too few for a split with "
            f"{valid_fraction:.0%} validation and {test_fraction:.0%} test triples (build the "
            "KG from a source with more relations, or raise the fractions)"
        )
    factory = TriplesFactory.from_labeled_triples(triples, create_inverse_triples=False)
    try:
        train, valid, test = factory.split(ratios, random_state=seed)
    except ValueError as exc:
        raise EmptyResultError(
            f"cannot split the KG's {n} triples so that every validation/test entity and "
            f"relation occurs in training ({exc}); lower the validation and test fractions"
        ) from None
    return TripleSplit(train, valid, test, dropped)


def sample_triples(factory: Any, max_triples: int | None, seed: int) -> Any:
    """The triples factory, or a seeded sample of ``max_triples`` of its triples."""
    import torch

    n = int(factory.num_triples)
    if max_triples is None or max_triples >= n:
        return factory
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    keep = order[:max_triples].sort().values
    return factory.clone_and_exchange_triples(factory.mapped_triples[keep])


def with_reciprocal_relations(factory: Any) -> Any:
    """The same triples and ids, flagged so that PyKEEN adds a reciprocal (t, r⁻¹, h) for every
    (h, r, t) (1-N training predicts heads as tails of r⁻¹; relation r is model row 2r)."""
    from pykeen.triples import TriplesFactory

    return TriplesFactory(
        mapped_triples=factory.mapped_triples,
        entity_to_id=factory.entity_to_id,
        relation_to_id=factory.relation_to_id,
        create_inverse_triples=True,
    )
