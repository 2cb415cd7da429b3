"""Batches of terms drawn from a knowledge graph, as CODER samples them.

A batch has k *slots* (h_i, r_i, t_i), i = 1..k, and holds 2k terms: ``terms[i]`` is a term of
h_i and ``terms[k + i]`` a term of t_i. Slots come in groups of m identical triplets
(2 ≤ m ≤ √k; the last group is shorter when m does not divide k), so every concept in a batch
has positives and negatives. A share of the groups are *synonym-only* (h = t = one concept,
no relation, ``rel_idx = -1``) so that concepts with few or no relations are reached too.
Each concept occurrence draws its own term (without replacement inside a group while the
concept has unused terms; optionally a language first, then a term).

Domain groups (``--train-data od``): a ``domain_share`` of the synonym-only groups are drawn
from concepts that have training-mention terms (``source == "domain"``, see
:mod:`termnorm.training.domain_terms`) as well as KG terms; their heads are mentions and their
tails KG terms of that concept, so every such group holds mention↔KG-term positives (the
language balancing does not apply to them).

Hard-negative composition (CODER++-style): after :meth:`KGSampler.set_neighbours` a share of
the groups is built as clusters around a random seed concept: its nearest concepts in the
current embedding space (synonym groups) or triplets whose heads are near the seed's head
(relation groups). As the trainer's batch source (:mod:`termnorm.training.protocols`) the
sampler rebuilds that table with the current weights every ``refresh_every`` steps
(:meth:`KGSampler.before_step`).

Sampling is counter-based: batch ``(step, shard)`` depends only on ``(seed, step, shard)`` and
the neighbour table, so resuming or sharding over DDP ranks / accumulation micro-batches
(``shard = rank · accum + micro``) reproduces the same stream.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from termnorm.kg import KnowledgeGraph
from termnorm.training.config import check_batch_shape
from termnorm.training.domain_terms import DOMAIN_SOURCE
from termnorm.training.hard_negatives import nearest_neighbours

logger = logging.getLogger(__name__)

__all__ = ["Batch", "KGSampler"]


@dataclass
class Batch:
    """2k terms (heads then tails) with their concept labels and the k slots' relations."""

    terms: list[str]  # [2k]
    labels: torch.Tensor  # [2k] concept index
    rel_idx: torch.Tensor  # [k] relation label index, -1 for synonym-only slots
    corrupted: torch.Tensor  # [k] index into terms of a term of another concept (TransE)
    sty: torch.Tensor | None = None  # [2k, T] semantic-type targets

    @property
    def k(self) -> int:
        """Number of slots."""
        return len(self.rel_idx)


class KGSampler:
    """Draws :class:`Batch` es from a KG.

    Args:
        kg: the knowledge graph.
        k: slots per batch (≥ 2).
        m: repeats per sampled triplet (2 ≤ m ≤ √k).
        synonym_share: share of groups that are synonym-only (forced to 1 without relations).
        lang_balanced: choose a language uniformly, then a term of that language.
        seed: base seed.
        hard_share: share of groups built from near-concept clusters (once neighbours exist).
        hard_cluster: groups per cluster.
        with_types: also return semantic-type targets.
        domain_share: share of synonym-only groups that are domain groups (see module doc).
        refresh_every: rebuild the neighbour table every N steps in :meth:`before_step`
            (0 = never).
        refresh_neighbours: neighbours kept per concept at each rebuild.
        refresh_max_concepts: concepts embedded per rebuild (see :meth:`refresh`).
    """

    def __init__(
        self,
        kg: KnowledgeGraph,
        k: int,
        m: int,
        synonym_share: float = 0.5,
        lang_balanced: bool = False,
        seed: int = 0,
        hard_share: float = 0.0,
        hard_cluster: int = 4,
        with_types: bool = False,
        domain_share: float = 0.0,
        refresh_every: int = 0,
        refresh_neighbours: int = 16,
        refresh_max_concepts: int = 300_000,
    ) -> None:
        check_batch_shape(k, m)
        self.refresh_every = refresh_every
        self.refresh_neighbours = refresh_neighbours
        self.refresh_max_concepts = refresh_max_concepts
        self.k, self.m, self.seed = k, m, seed
        self.lang_balanced = lang_balanced
        self.hard_share, self.hard_cluster = hard_share, max(2, hard_cluster)
        terms = kg.terms.sort_values("concept_id", kind="stable")
        ids, first = np.unique(terms["concept_id"].to_numpy(dtype=str), return_index=True)
        self.concept_ids: list[str] = ids.tolist()
        self.index = {cid: i for i, cid in enumerate(self.concept_ids)}
        self.term_text: np.ndarray = terms["term"].to_numpy(dtype=object)
        self.term_lang: np.ndarray = terms["lang"].fillna("").to_numpy(dtype=object)
        self.offsets = np.append(first, len(terms)).astype(np.int64)  # [C + 1]
        names = kg.concept_names()
        self.names = [names.get(c) or str(self.term_text[first[i]]) for i, c in enumerate(ids)]
        sizes = np.diff(self.offsets)
        self.syn_pool = np.flatnonzero(sizes >= 2) if (sizes >= 2).any() else np.arange(len(ids))
        self._init_domain(terms["source"].to_numpy(dtype=object) == DOMAIN_SOURCE, domain_share)
        self._init_relations(kg)
        self.synonym_share = 1.0 if self.n_triplets == 0 else synonym_share
        self.type_labels: list[str] = []
        self.concept_types: list[list[int]] = []
        if with_types:
            self._init_types(kg)
        self.neighbours: np.ndarray | None = None  # [C, n]
        self.hard_syn_seeds: np.ndarray = self.syn_pool
        self.hard_rel_seeds: np.ndarray = np.arange(self.n_triplets)

    # ------------------------------------------------------------------ setup
    def _init_relations(self, kg: KnowledgeGraph) -> None:
        rel = kg.relations
        h = rel["head"].map(self.index)
        t = rel["tail"].map(self.index)
        ok = h.notna() & t.notna() & (rel["head"] != rel["tail"])
        dropped = int((~ok).sum())
        if dropped:
            logger.info(
                "sampler: %d relations skipped (self-loop or concept without term)", dropped
            )
        rel = rel[ok]
        self.relation_labels: list[str] = sorted(rel["relation"].unique().tolist())
        lab = {r: i for i, r in enumerate(self.relation_labels)}
        self.heads = h[ok].to_numpy(dtype=np.int64)
        self.rels = rel["relation"].map(lab).to_numpy(dtype=np.int64)
        self.tails = t[ok].to_numpy(dtype=np.int64)
        self.n_triplets = len(self.heads)
        order = np.argsort(self.heads, kind="stable")
        self.by_head = order  # triplet indices sorted by head
        self.head_offsets = np.searchsorted(self.heads[order], np.arange(len(self.concept_ids) + 1))

    def _init_domain(self, is_domain: np.ndarray, share: float) -> None:
        self.term_domain = is_domain  # [T]
        starts = self.offsets[:-1]
        n_domain = np.add.reduceat(is_domain.astype(np.int64), starts)  # [C]
        n_kg = np.diff(self.offsets) - n_domain
        self.domain_pool = np.flatnonzero((n_domain > 0) & (n_kg > 0))
        if share > 0 and len(self.domain_pool) == 0:
            raise ValueError(
                "--domain-share > 0 but no concept has both a training-mention term and a KG "
                "term; pass --train-data od with --mentions, or set --domain-share 0"
            )
        self.domain_share = share

    def _init_types(self, kg: KnowledgeGraph) -> None:
        types = dict(zip(kg.concepts["concept_id"], kg.concepts["semantic_types"], strict=True))
        self.type_labels = sorted({t for c in self.concept_ids for t in (types.get(c) or [])})
        lab = {t: i for i, t in enumerate(self.type_labels)}
        self.concept_types = [[lab[t] for t in (types.get(c) or [])] for c in self.concept_ids]

    # ------------------------------------------------------------------ hard negatives
    def set_neighbours(self, neighbours: np.ndarray | None) -> None:
        """Install a nearest-concept table ``[C, n]`` (-1 = none), or remove it."""
        self.neighbours = None if neighbours is None else np.asarray(neighbours, dtype=np.int64)
        if self.neighbours is None:
            return
        # cluster seeds: concepts (synonym groups) and triplets (relation groups) whose
        # concept has a neighbour row, so every cluster can grow
        has_row: np.ndarray = np.asarray((self.neighbours >= 0).any(axis=1))  # [C]
        syn_seeds = self.syn_pool[has_row[self.syn_pool]]
        self.hard_syn_seeds = syn_seeds if len(syn_seeds) else self.syn_pool
        rel_seeds = np.flatnonzero(has_row[self.heads]) if self.n_triplets else np.empty(0)
        self.hard_rel_seeds = rel_seeds if len(rel_seeds) else np.arange(self.n_triplets)

    def refresh(
        self,
        encode: Callable[[list[str]], np.ndarray],
        n: int = 16,
        max_concepts: int = 300_000,
        step: int = 0,
    ) -> None:
        """Embed one name per concept with ``encode`` and rebuild the neighbour table.

        Above ``max_concepts`` a random subset (drawn from the seed and ``step``, so each
        refresh covers other concepts) is embedded and searched; the others get no row.
        """
        c = len(self.concept_ids)
        subset = np.arange(c)
        if c > max_concepts:
            rng = np.random.default_rng([self.seed, 7, step])
            subset = np.sort(rng.choice(c, max_concepts, replace=False))
        vectors = encode([self.names[i] for i in subset])  # [c', d]
        local = nearest_neighbours(vectors, n)  # [c', n] positions in subset
        table = np.full((c, n), -1, dtype=np.int64)
        table[subset] = np.where(local >= 0, subset[np.clip(local, 0, None)], -1)
        self.set_neighbours(table)

    def before_step(self, step: int, encode: Callable[[list[str]], np.ndarray]) -> None:
        """Rebuild the neighbour table with ``encode`` when ``step`` is a multiple of
        ``refresh_every`` (the trainer calls this before every step)."""
        if not self.refresh_every or step % self.refresh_every:
            return
        tick = time.perf_counter()
        self.refresh(encode, self.refresh_neighbours, self.refresh_max_concepts, step)
        logger.info("hard negatives: neighbour table rebuilt in %.1fs", time.perf_counter() - tick)

    # ------------------------------------------------------------------ batches
    def batch(self, step: int, shard: int = 0) -> Batch:
        """The batch of ``(step, shard)``: deterministic given the seed and neighbour table."""
        rng = np.random.default_rng([self.seed, step, shard])
        sizes = [self.m] * (self.k // self.m)  # k >= m*m, so there are at least m groups
        sizes[-1] += self.k % self.m  # the remainder joins the last group: every triplet >= m times
        n_groups = len(sizes)
        n_syn = round(self.synonym_share * n_groups)
        n_dom = round(self.domain_share * n_syn)
        groups = (
            self._relation_groups(rng, n_groups - n_syn)
            + self._synonym_groups(rng, n_syn - n_dom)
            + [(int(c), -1, int(c)) for c in rng.choice(self.domain_pool, size=n_dom)]
        )
        heads, rels, tails = [], [], []
        head_terms: list[str] = []
        tail_terms: list[str] = []
        for g, ((h, r, t), size) in enumerate(zip(groups, sizes, strict=True)):
            heads += [h] * size
            rels += [r] * size
            tails += [t] * size
            if g >= n_groups - n_dom:  # domain group: mentions, then KG terms of one concept
                head_terms += self._draw_terms(rng, h, size, domain=True)
                tail_terms += self._draw_terms(rng, h, size, domain=False)
            elif h == t:  # synonym-only: 2·size terms of one concept
                drawn = self._draw_terms(rng, h, 2 * size)
                head_terms += drawn[:size]
                tail_terms += drawn[size:]
            else:
                head_terms += self._draw_terms(rng, h, size)
                tail_terms += self._draw_terms(rng, t, size)
        labels = np.array(heads + tails, dtype=np.int64)  # [2k]
        sty = self._sty_targets(labels) if self.type_labels else None
        return Batch(
            terms=head_terms + tail_terms,
            labels=torch.from_numpy(labels),
            rel_idx=torch.tensor(rels, dtype=torch.long),
            corrupted=torch.from_numpy(self._corrupt(rng, labels)),
            sty=sty,
        )

    def _relation_groups(self, rng: np.random.Generator, n: int) -> list[tuple[int, int, int]]:
        if n <= 0:
            return []
        out: list[int] = []
        n_hard = round(self.hard_share * n) if self.neighbours is not None else 0
        while len(out) < n_hard:
            seed = int(rng.choice(self.hard_rel_seeds))
            out.append(seed)
            near = self._near(int(self.heads[seed]))
            cands = np.concatenate(
                [self.by_head[self.head_offsets[c] : self.head_offsets[c + 1]] for c in near]
                + [np.empty(0, dtype=np.int64)]
            )
            cands = cands[cands != seed]
            take = min(len(cands), self.hard_cluster - 1, n_hard - len(out))
            out += rng.choice(cands, take, replace=False).tolist() if take > 0 else []
        out += rng.integers(self.n_triplets, size=n - len(out)).tolist()
        return [(int(self.heads[i]), int(self.rels[i]), int(self.tails[i])) for i in out[:n]]

    def _synonym_groups(self, rng: np.random.Generator, n: int) -> list[tuple[int, int, int]]:
        if n <= 0:
            return []
        out: list[int] = []
        n_hard = round(self.hard_share * n) if self.neighbours is not None else 0
        while len(out) < n_hard:
            seed = int(rng.choice(self.hard_syn_seeds))
            near = self._near(seed)[1:]
            take = min(len(near), self.hard_cluster - 1, n_hard - len(out) - 1)
            out += [seed] + (rng.choice(near, take, replace=False).tolist() if take > 0 else [])
        out += rng.choice(self.syn_pool, size=n - len(out)).tolist()
        return [(int(c), -1, int(c)) for c in out[:n]]

    def _near(self, concept: int) -> np.ndarray:
        """The concept followed by its neighbours (no -1 entries)."""
        assert self.neighbours is not None
        row = self.neighbours[concept]
        return np.concatenate([[concept], row[row >= 0]]).astype(np.int64)

    def _draw_terms(
        self, rng: np.random.Generator, concept: int, count: int, domain: bool | None = None
    ) -> list[str]:
        """``count`` terms of ``concept``; only its mention (``True``) or KG (``False``) terms
        when ``domain`` is given."""
        lo, hi = int(self.offsets[concept]), int(self.offsets[concept + 1])
        if domain is not None:
            pool = lo + np.flatnonzero(self.term_domain[lo:hi] == domain)
            perm = rng.permutation(pool)
            return [str(self.term_text[perm[i % len(perm)]]) for i in range(count)]
        if self.lang_balanced:
            langs = self.term_lang[lo:hi]
            choices = np.unique(langs)
            picks = []
            for lang in rng.choice(choices, size=count):
                pool = np.flatnonzero(langs == lang)
                picks.append(lo + int(rng.choice(pool)))
            return [str(self.term_text[i]) for i in picks]
        perm = rng.permutation(hi - lo)
        return [str(self.term_text[lo + perm[i % len(perm)]]) for i in range(count)]

    def _corrupt(self, rng: np.random.Generator, labels: np.ndarray) -> np.ndarray:
        """For each slot i, a batch position holding a concept other than t_i (or t_i's own)."""
        k = len(labels) // 2
        out = np.empty(k, dtype=np.int64)
        for i in range(k):
            other = np.flatnonzero(labels != labels[k + i])
            out[i] = int(rng.choice(other)) if len(other) else k + i
        return out

    def _sty_targets(self, labels: np.ndarray) -> torch.Tensor:
        out = torch.zeros(len(labels), len(self.type_labels))
        for row, c in enumerate(labels):
            types = self.concept_types[c]
            if types:
                out[row, types] = 1.0 / len(types)
        return out

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint needs to reproduce the batch stream."""
        return {"seed": self.seed, "neighbours": self.neighbours}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.seed = int(state["seed"])
        self.set_neighbours(state.get("neighbours"))

    def stats(self) -> dict[str, int]:
        """Counts the sampler works with (for the model card)."""
        return {
            "concepts_with_terms": len(self.concept_ids),
            "terms": len(self.term_text),
            "triplets": self.n_triplets,
            "relation_labels": len(self.relation_labels),
            "semantic_types": len(self.type_labels),
            "domain_terms": int(self.term_domain.sum()),
            "domain_concepts": len(self.domain_pool),
        }

    def describe(self, labels: Sequence[int]) -> list[str]:
        """Concept IDs of label indices (debugging, tests)."""
        return [self.concept_ids[i] for i in labels]
