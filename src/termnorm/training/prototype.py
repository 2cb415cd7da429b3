"""Prototype batches with dynamic hard negatives (the Italian KGE paper §3.2, after CODER++).

The training texts D are the KG's terms (plus ``--train-data od`` mentions) and, with
``--corpus``, self-supervised contextual mentions (:mod:`termnorm.mentions.contexts`: marked
windows that join their concept as extra positives). Before training, a few *prototypes* are
chosen per concept with at least two texts — up to ``prototypes_per_concept``, one per
distinct surface form first. A batch holds P prototypes of P different concepts; each
prototype p brings

* k positives: texts of p's concept, those with another surface form than p's first (the
  paper's "prioritizing contexts that use different synonyms"), cycling when there are fewer;
* m possibly-hard negatives: the texts nearest to p in an exact faiss index of the embeddings
  of *all* training texts (:func:`~termnorm.training.hard_negatives.nearest_texts`), other
  concepts only, topped up with random texts of other concepts when fewer are found (before
  the first refresh, or for a prototype outside the searched subset).

So a batch is ``P × (1 + k + m)`` texts, labelled by concept index; the MS losses (v1, v2, v3)
mine their pairs inside it as usual. The index is rebuilt with the current weights every
epoch (``ceil(#prototypes / P)`` steps) or every ``prototype_refresh`` steps; at most
``hard_max_concepts`` prototypes (a seeded random subset per refresh) are searched, and the
batches draw their prototypes from those. Batches are counter-based, like the KG sampler's.

:func:`prototype_trainer` composes a :class:`~termnorm.training.Trainer` for ``--batches
prototype`` with ``--loss ms|ms-v2|ms-v3``.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from termnorm.encoders.markers import add_mention_markers
from termnorm.kg import KnowledgeGraph
from termnorm.mentions.contexts import (
    MENTION_START,
    ContextCorpus,
    TermDictionary,
    contextual_mentions,
    read_corpus,
    surface_key,
)
from termnorm.training.coder import CoderObjective
from termnorm.training.composition import Job, Parts, composition
from termnorm.training.config import LossKind, TrainConfig
from termnorm.training.data import with_domain_terms
from termnorm.training.hard_negatives import nearest_texts
from termnorm.training.kge_margin import kge_margin_objective, load_margin_kge
from termnorm.training.protocols import Objective
from termnorm.training.sampler import Batch

__all__ = ["PrototypeSource", "load_contexts", "prototype_parts", "prototype_trainer"]

logger = logging.getLogger(__name__)


class PrototypeSource:
    """Prototype batches over labelled texts (see the module doc).

    Args:
        texts: the training texts.
        concepts: each text's concept ID.
        keys: each text's surface form key (which synonym it uses).
        prototypes: P, prototypes per batch.
        positives: k, positives per prototype.
        negatives: m, negatives per prototype.
        per_concept: prototypes chosen per concept.
        seed: base seed (prototype choice and batches).
        refresh_every: rebuild the index every N steps in :meth:`before_step` (0: every
            epoch, ``ceil(#prototypes / P)`` steps; negative: never).
        max_queries: prototypes searched per refresh.
    """

    def __init__(
        self,
        texts: Sequence[str],
        concepts: Sequence[str],
        keys: Sequence[str],
        prototypes: int = 4,
        positives: int = 20,
        negatives: int = 30,
        per_concept: int = 3,
        seed: int = 0,
        refresh_every: int = 0,
        max_queries: int = 10_000,
    ) -> None:
        if not len(texts) == len(concepts) == len(keys):
            raise ValueError("texts, concepts and keys must have one entry per text")
        if min(prototypes, positives, per_concept, max_queries) < 1 or negatives < 0:
            raise ValueError(
                "prototypes, positives, prototypes per concept and searched prototypes must be "
                f"at least 1, negatives at least 0 (got {prototypes}, {positives}, {per_concept}, "
                f"{max_queries}, {negatives})"
            )
        self.p, self.k, self.m, self.seed = prototypes, positives, negatives, seed
        self.max_queries = max_queries
        order = np.argsort(np.asarray(concepts, dtype=str), kind="stable")
        self.texts = np.asarray(texts, dtype=object)[order]
        self.keys = np.asarray(keys, dtype=object)[order]
        ids, first, labels = np.unique(
            np.asarray(concepts, dtype=str)[order], return_index=True, return_inverse=True
        )
        self.concept_ids: list[str] = ids.tolist()
        self.labels = labels.astype(np.int64)  # [T] concept index of each text
        self.offsets = np.append(first, len(self.texts)).astype(np.int64)  # [C + 1]
        sizes = np.diff(self.offsets)
        self.eligible = np.flatnonzero(sizes >= 2)  # concepts that can be prototypes
        if len(self.eligible) < prototypes:
            raise ValueError(
                f"prototype batches need {prototypes} concepts with at least two texts, the "
                f"training data has {len(self.eligible)}: lower --prototypes or add synonyms "
                "(--corpus contexts)"
            )
        self._choose_prototypes(per_concept)
        n_epoch = math.ceil(len(self.proto_text) / prototypes)
        self.refresh_every = n_epoch if refresh_every == 0 else max(refresh_every, 0)
        self.neighbours: np.ndarray | None = None  # [n_prototypes, n] text indices, -1 = none
        self.searched = np.arange(len(self.proto_text))  # prototypes with a neighbour row

    # ------------------------------------------------------------------ setup
    def _choose_prototypes(self, per_concept: int) -> None:
        """Up to ``per_concept`` texts per eligible concept, a new surface form each while the
        concept has unused ones (seeded round robin over its surface forms)."""
        rng = np.random.default_rng([self.seed, 11])
        proto_text: list[int] = []
        by_concept: list[list[int]] = []
        for c in self.eligible:
            lo, hi = int(self.offsets[c]), int(self.offsets[c + 1])
            groups: dict[str, list[int]] = {}
            for i in rng.permutation(np.arange(lo, hi)).tolist():
                groups.setdefault(str(self.keys[i]), []).append(i)
            queues = list(groups.values())
            chosen: list[int] = []
            while len(chosen) < per_concept and any(queues):
                for q in queues:
                    if q and len(chosen) < per_concept:
                        chosen.append(q.pop(0))
            by_concept.append(list(range(len(proto_text), len(proto_text) + len(chosen))))
            proto_text += chosen
        self.proto_text = np.asarray(proto_text, dtype=np.int64)  # [n_prototypes] text index
        self.proto_of_concept = by_concept  # eligible position -> prototype indices

    # ------------------------------------------------------------------ hard negatives
    def refresh(self, encode: Callable[[list[str]], np.ndarray], step: int = 0) -> None:
        """Embed every training text with ``encode``, index them, and keep each searched
        prototype's nearest texts."""
        n = len(self.proto_text)
        subset = np.arange(n)
        if n > self.max_queries:
            rng = np.random.default_rng([self.seed, 13, step])
            subset = np.sort(rng.choice(n, self.max_queries, replace=False))
        vectors = encode([str(t) for t in self.texts])  # [T, d]
        found = nearest_texts(vectors, vectors[self.proto_text[subset]], self.search_width)
        table = np.full((n, self.search_width), -1, dtype=np.int64)
        table[subset] = found
        self.set_neighbours(table, subset)

    @property
    def search_width(self) -> int:
        """Texts fetched per prototype: m plus room for the concept's own texts."""
        largest = int(np.diff(self.offsets).max())
        return self.m + min(largest, 64) + 1

    def set_neighbours(self, table: np.ndarray | None, searched: np.ndarray | None = None) -> None:
        """Install a prototype → nearest-texts table (or remove it)."""
        self.neighbours = None if table is None else np.asarray(table, dtype=np.int64)
        n = len(self.proto_text)
        self.searched = np.arange(n) if searched is None else np.asarray(searched, dtype=np.int64)

    def before_step(self, step: int, encode: Callable[[list[str]], np.ndarray]) -> None:
        """Rebuild the index at step 0 and every ``refresh_every`` steps."""
        if self.refresh_every <= 0 or step % self.refresh_every:
            return
        tick = time.perf_counter()
        self.refresh(encode, step)
        logger.info(
            "prototype batches: index of %d texts rebuilt in %.1fs",
            len(self.texts),
            time.perf_counter() - tick,
        )

    # ------------------------------------------------------------------ batches
    def batch(self, step: int, shard: int = 0) -> Batch:
        """``P × (1 + k + m)`` texts: per prototype itself, its positives, its negatives."""
        rng = np.random.default_rng([self.seed, step, shard])
        protos = self._draw_prototypes(rng)
        rows: list[int] = []
        for proto in protos:
            t = int(self.proto_text[proto])
            rows.append(t)
            rows += self._positives(rng, t)
            rows += self._negatives(rng, int(proto), int(self.labels[t]))
        idx = np.asarray(rows, dtype=np.int64)
        return Batch(
            terms=[str(s) for s in self.texts[idx]],
            labels=torch.from_numpy(self.labels[idx].copy()),
            rel_idx=torch.empty(0, dtype=torch.long),
            corrupted=torch.empty(0, dtype=torch.long),
        )

    def _draw_prototypes(self, rng: np.random.Generator) -> list[int]:
        """P prototypes of P different concepts, from the searched ones when there is a table."""
        if self.neighbours is not None:
            pool = self.searched
            concepts = self.labels[self.proto_text[pool]]
            _, first = np.unique(concepts, return_index=True)
            if len(first) >= self.p:  # enough distinct concepts among the searched prototypes
                picks = rng.choice(first, self.p, replace=False)
                out = []
                for i in picks:  # a random searched prototype of that concept
                    same = pool[concepts == concepts[i]]
                    out.append(int(rng.choice(same)))
                return out
        positions = rng.choice(len(self.eligible), self.p, replace=False)
        return [int(rng.choice(self.proto_of_concept[int(e)])) for e in positions]

    def _positives(self, rng: np.random.Generator, text: int) -> list[int]:
        c = int(self.labels[text])
        lo, hi = int(self.offsets[c]), int(self.offsets[c + 1])
        others = np.array([i for i in range(lo, hi) if i != text], dtype=np.int64)
        other_key = others[self.keys[others] != self.keys[text]]
        same_key = others[self.keys[others] == self.keys[text]]
        ranked = np.concatenate([rng.permutation(other_key), rng.permutation(same_key)])
        return [int(ranked[i % len(ranked)]) for i in range(self.k)]

    def _negatives(self, rng: np.random.Generator, proto: int, concept: int) -> list[int]:
        out: list[int] = []
        if self.neighbours is not None:
            row = self.neighbours[proto]
            row = row[row >= 0]
            out = row[self.labels[row] != concept][: self.m].tolist()
        while len(out) < self.m:
            i = int(rng.integers(len(self.texts)))
            if self.labels[i] != concept:
                out.append(i)
        return out

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint needs to reproduce the batch stream."""
        return {"seed": self.seed, "neighbours": self.neighbours, "searched": self.searched}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.seed = int(state["seed"])
        self.set_neighbours(state.get("neighbours"), state.get("searched"))

    def stats(self) -> dict[str, int]:
        """Counts for the model card."""
        return {
            "texts": len(self.texts),
            "contexts": sum(MENTION_START in str(t) for t in self.texts),
            "concepts_with_texts": len(self.concept_ids),
            "prototype_concepts": len(self.eligible),
            "prototypes": len(self.proto_text),
            "refresh_every_steps": self.refresh_every,
        }


def load_contexts(config: TrainConfig, kg: KnowledgeGraph) -> ContextCorpus | None:
    """The contextual mentions of ``config.corpus`` matched against ``kg``'s terms (None
    without a corpus); the counts are logged."""
    if not config.corpus:
        return None
    dictionary = TermDictionary.from_kg(kg)
    documents = read_corpus(config.corpus, config.corpus_format)
    corpus = contextual_mentions(
        documents,
        dictionary,
        config.prototype.context_words,
        config.prototype.contexts_per_term,
        config.seed,
    )
    logger.info("contextual mentions: %s (dictionary: %s)", corpus.counts, dictionary.counts)
    return corpus


def prototype_source(config: TrainConfig, kg: KnowledgeGraph) -> PrototypeSource:
    """The :class:`PrototypeSource` of ``config``: the KG's terms plus the corpus contexts."""
    texts = kg.terms["term"].astype(str).tolist()
    concepts = kg.terms["concept_id"].astype(str).tolist()
    keys = [surface_key(t) for t in texts]
    corpus = load_contexts(config, kg)
    if corpus is not None:
        texts += [m.context for m in corpus.mentions]
        concepts += [m.concept_id for m in corpus.mentions]
        keys += [m.key for m in corpus.mentions]
    keep: dict[tuple[str, str], int] = {}  # first occurrence of each (text, concept)
    for i, pair in enumerate(zip(texts, concepts, strict=True)):
        keep.setdefault(pair, i)
    rows = sorted(keep.values())
    return PrototypeSource(
        [texts[i] for i in rows],
        [concepts[i] for i in rows],
        [keys[i] for i in rows],
        prototypes=config.prototype.prototypes,
        positives=config.prototype.prototype_positives,
        negatives=config.prototype.prototype_negatives,
        per_concept=config.prototype.prototypes_per_concept,
        seed=config.seed,
        refresh_every=config.prototype.prototype_refresh,
        max_queries=config.sampler.hard_max_concepts,
    )


def prototype_parts(job: Job) -> Parts:
    """The parts of ``--batches prototype``: prototype batches + the MS loss of
    ``config.loss`` (``ms``, ``ms-v2``, or ``ms-v3`` with ``--kge``).

    With ``--corpus`` the encoder gets the mention markers (two new tokens) first.
    """
    config, kg = job.config, job.kg
    config.validate()
    kge = load_margin_kge(config, kg) if config.loss is LossKind.MS_V3 else None
    kg = with_domain_terms(config, kg, job.mentions)
    encoder = job.encoder()[0]
    source = prototype_source(config, kg)
    if config.corpus:
        add_mention_markers(encoder)
    objective: Objective
    if kge is not None:
        objective = kge_margin_objective(config, kge, source.concept_ids)
    else:
        objective = CoderObjective(int(encoder.model.config.hidden_size), config, [], 0)
    logger.info("prototype batches: %s", source.stats())
    return Parts(source, objective, kg)


prototype_trainer = composition(prototype_parts)
