"""The paper's triple split: 90 % training, 6 % test, 4 % validation, with every entity and
relation of the validation and test parts seen in training.

PyKEEN's ``TriplesFactory.split`` with its default *coverage* splitter does this: it first puts
a greedy cover of the triples into training (one triple per relation, then one per entity not
yet covered), then splits the remaining triples at random (seeded) so that the part sizes are
exactly ``⌊cumulative ratio × n⌋`` differences.

A KG whose cover does not fit into the training share — a plain tree, where every leaf hangs
on one edge (ICD-10 WHO: 12,434 triples) — is split by :func:`hold_out_keeping_ends` instead:
triples are visited in a seeded random order and held out only while their head, tail and
relation keep another triple in training; the others stay in training. Validation and test
get their requested sizes when enough triples can be held out (ICD-10 WHO, seed 0: 497 and
747, with 7,319 leaf edges met on the way kept in training), else the held-out triples in the requested
validation : test proportion. :attr:`TripleSplit.kept_in_training` (on the KGE card and in
``termnorm kge train``'s output) counts the triples met that stayed in training for that
reason. A KG where fewer than two triples can be held out is refused with a message.
"""

from __future__ import annotations

import logging
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
    "hold_out_keeping_ends",
    "kg_triples",
    "sample_triples",
    "split_triples",
    "with_reciprocal_relations",
]

logger = logging.getLogger(__name__)

PARTS = ("train", "valid", "test")
COVERAGE = "pykeen coverage"
KEEPING_ENDS = "held out while both ends and the relation stay in training"


@dataclass
class TripleSplit:
    """PyKEEN triples factories of the three parts (one entity/relation id mapping), how they
    were drawn (``method``: :data:`COVERAGE` or :data:`KEEPING_ENDS`) and how many triples of
    the requested validation and test parts stayed in training to keep their ends there."""

    train: Any
    valid: Any
    test: Any
    duplicates_dropped: int = 0
    method: str = COVERAGE
    kept_in_training: int = 0

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
    except ValueError as exc:  # "Could not find a coverage of all entities and relation..."
        if "coverage" not in str(exc):
            raise
        return _split_keeping_ends(factory, ratios, seed, dropped)
    return TripleSplit(train, valid, test, dropped)


def hold_out_keeping_ends(mapped: np.ndarray, seed: int, limit: int) -> tuple[np.ndarray, int]:
    """Rows of the ``[n, 3]`` id triples ``mapped`` to hold out, at most ``limit``, visited in
    a seeded random order: a row is held out when its head, tail and relation each keep
    another row outside the held-out ones (so every entity and relation stays in training).
    Also returns how many rows were visited and kept in training for that reason."""
    entities = np.bincount(mapped[:, [0, 2]].ravel())
    relations = np.bincount(mapped[:, 1])
    held: list[int] = []
    kept = 0
    for row in np.random.default_rng(seed).permutation(len(mapped)):
        if len(held) == limit:
            break
        head, relation, tail = mapped[row]
        entities[head] -= 1
        entities[tail] -= 1
        if entities[head] and entities[tail] and relations[relation] > 1:
            relations[relation] -= 1
            held.append(int(row))
        else:
            entities[head] += 1
            entities[tail] += 1
            kept += 1
    return np.asarray(held, dtype=np.int64), kept


def _split_keeping_ends(factory: Any, ratios: list[float], seed: int, dropped: int) -> TripleSplit:
    """The split of a KG whose cover does not fit into the training share (module doc)."""
    import torch
    from pykeen.triples.splitting import get_absolute_split_sizes

    mapped = factory.mapped_triples.numpy()
    n = len(mapped)
    _, want_valid, want_test = get_absolute_split_sizes(n_total=n, ratios=ratios)
    held, kept = hold_out_keeping_ends(mapped, seed, want_valid + want_test)
    if len(held) < 2:
        raise EmptyResultError(
            f"the KG's {n} triples cannot be split: holding out any of them for validation or "
            "test would remove an entity or relation from training (every concept hangs on "
            "one edge); build the KG from a source with more relations"
        )
    n_valid = want_valid
    if len(held) < want_valid + want_test:  # the held-out triples in the requested proportion
        share = round(len(held) * want_valid / (want_valid + want_test))
        n_valid = min(max(share, 1), len(held) - 1)
    train_rows = np.ones(n, dtype=bool)
    train_rows[held] = False
    parts = [
        torch.from_numpy(np.flatnonzero(train_rows)),
        torch.from_numpy(held[:n_valid]),
        torch.from_numpy(held[n_valid:]),
    ]
    train, valid, test = (
        # as PyKEEN's own split: inverse triples only ever for training
        factory.clone_and_exchange_triples(
            mapped_triples=factory.mapped_triples[rows],
            create_inverse_triples=None if i == 0 else False,
        )
        for i, rows in enumerate(parts)
    )
    logger.warning(
        "KGE split: %d triples stay in training, since holding them out would remove an "
        "entity or relation from training; %d validation and %d test triples (requested: "
        "%d and %d)",
        kept,
        n_valid,
        len(held) - n_valid,
        want_valid,
        want_test,
    )
    return TripleSplit(train, valid, test, dropped, KEEPING_ENDS, kept)


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
