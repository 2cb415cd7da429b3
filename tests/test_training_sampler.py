"""KG batch sampler: batch shape and repeats, determinism, state, hard-negative clusters."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from termnorm.kg import KnowledgeGraph
from termnorm.training import KGSampler, nearest_neighbours


def _groups(labels: list[int], k: int, m: int) -> list[tuple[int, int]]:
    heads, tails = labels[:k], labels[k:]
    return [(heads[i], tails[i]) for i in range(0, k, m)]


def test_batch_holds_2k_terms_in_groups_of_m_repeats(tiny_kg: KnowledgeGraph) -> None:
    k, m = 16, 4
    sampler = KGSampler(tiny_kg, k=k, m=m, synonym_share=0.5, seed=3)
    terms_of = tiny_kg.terms_by_concept()
    for step in range(5):
        b = sampler.batch(step)
        assert len(b.terms) == 2 * k and b.labels.shape == (2 * k,) and b.rel_idx.shape == (k,)
        labels, rel = b.labels.tolist(), b.rel_idx.tolist()
        for g in range(0, k, m):  # each group repeats one triplet m times
            assert len({(labels[i], rel[i], labels[k + i]) for i in range(g, g + m)}) == 1
        # half the groups synonym-only (h = t, no relation), half real KG triplets
        groups = _groups(labels, k, m)
        syn = [g for g in groups if g[0] == g[1]]
        assert len(syn) == 2
        triplets = set(
            zip(
                tiny_kg.relations["head"],
                tiny_kg.relations["relation"],
                tiny_kg.relations["tail"],
                strict=True,
            )
        )
        for i in range(k):
            h, t = sampler.concept_ids[labels[i]], sampler.concept_ids[labels[k + i]]
            if rel[i] < 0:
                assert h == t
            else:
                assert (h, sampler.relation_labels[rel[i]], t) in triplets
        for term, label in zip(b.terms, labels, strict=True):  # each term belongs to its concept
            assert term in terms_of[sampler.concept_ids[label]]


def test_terms_are_drawn_without_replacement_inside_a_group(tiny_kg: KnowledgeGraph) -> None:
    sampler = KGSampler(tiny_kg, k=4, m=2, synonym_share=1.0, seed=0)
    b = sampler.batch(0)
    # a synonym group of m = 2 slots draws 4 terms of one concept; every concept here has ≥ 3
    first_group = [b.terms[0], b.terms[1], b.terms[4], b.terms[5]]
    n_terms = len(tiny_kg.terms_by_concept()[sampler.concept_ids[int(b.labels[0])]])
    assert len(set(first_group)) == min(4, n_terms)


def test_batches_are_deterministic_per_seed_step_and_shard(tiny_kg: KnowledgeGraph) -> None:
    a = KGSampler(tiny_kg, k=16, m=4, seed=11)
    b = KGSampler(tiny_kg, k=16, m=4, seed=11)
    assert a.batch(7).terms == b.batch(7).terms
    assert a.batch(7, shard=1).terms == b.batch(7, shard=1).terms
    assert a.batch(7).terms != a.batch(7, shard=1).terms or a.batch(8).terms != a.batch(7).terms
    c = KGSampler(tiny_kg, k=16, m=4, seed=12)
    assert [c.batch(s).terms for s in range(4)] != [a.batch(s).terms for s in range(4)]


def test_state_restore_reproduces_hard_negative_batches(tiny_kg: KnowledgeGraph) -> None:
    a = KGSampler(tiny_kg, k=16, m=2, seed=5, hard_share=1.0, hard_cluster=3)
    rng = np.random.default_rng(0)
    a.refresh(lambda names: rng.normal(size=(len(names), 8)), n=3)
    b = KGSampler(tiny_kg, k=16, m=2, seed=0, hard_share=1.0, hard_cluster=3)
    b.load_state_dict(a.state_dict())
    for step in range(3):
        assert a.batch(step).terms == b.batch(step).terms


def test_hard_negative_groups_are_clusters_of_near_concepts(tiny_kg: KnowledgeGraph) -> None:
    sampler = KGSampler(tiny_kg, k=16, m=2, synonym_share=1.0, seed=1, hard_share=1.0)
    # neighbours: concepts 2j and 2j+1 are each other's only neighbour
    n = len(sampler.concept_ids)
    table = np.array([[i ^ 1 if (i ^ 1) < n else -1] for i in range(n)])
    sampler.set_neighbours(table)
    sampler.hard_cluster = 2
    for step in range(5):
        groups = _groups(sampler.batch(step).labels.tolist(), 16, 2)
        concepts = [h for h, _ in groups]
        for j in range(0, len(concepts), 2):  # clusters: a seed then its neighbour
            seed, other = concepts[j], concepts[j + 1]
            assert other == seed ^ 1 or table[seed, 0] == -1


def test_hard_relation_groups_take_triplets_of_near_heads() -> None:
    # 40 concepts, concept i heads one triplet i -> i+1; neighbours pair 2j with 2j+1
    n = 40
    concepts = [{"concept_id": f"C:{i}", "name": f"c{i}"} for i in range(n)]
    terms = [{"concept_id": f"C:{i}", "term": f"c{i} {s}"} for i in range(n) for s in "ab"]
    rels = [{"head": f"C:{i}", "relation": "r", "tail": f"C:{(i + 1) % n}"} for i in range(n)]
    kg = KnowledgeGraph.from_records(concepts, terms, rels)
    sampler = KGSampler(kg, k=16, m=2, synonym_share=0.0, seed=2, hard_share=1.0)
    idx = sampler.index
    table = np.array([[idx[f"C:{int(c[2:]) ^ 1}"]] for c in sampler.concept_ids])
    sampler.set_neighbours(table)
    sampler.hard_cluster = 2
    for step in range(10):
        groups = _groups(sampler.batch(step).labels.tolist(), 16, 2)
        heads = [int(sampler.concept_ids[h][2:]) for h, _ in groups]
        for j in range(0, len(heads), 2):  # clusters: a seed triplet, then its near head's
            assert heads[j + 1] == heads[j] ^ 1


def test_nearest_neighbours_match_brute_force() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6)).astype(np.float32)
    got = nearest_neighbours(x, 4, block=7)
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    sim = xn @ xn.T
    np.fill_diagonal(sim, -np.inf)
    expected = np.argsort(-sim, axis=1)[:, :4]
    assert (got == expected).all()
    assert (nearest_neighbours(x[:2], 3)[:, 1:] == -1).all()


def test_kg_without_relations_samples_synonym_groups_only(tiny_kg: KnowledgeGraph) -> None:
    bare = KnowledgeGraph.from_records(tiny_kg.concepts, tiny_kg.terms, None)
    sampler = KGSampler(bare, k=8, m=2, synonym_share=0.25, seed=0)
    assert sampler.synonym_share == 1.0
    b = sampler.batch(0)
    assert (b.rel_idx == -1).all()
    assert (b.labels[:8] == b.labels[8:]).all()


def test_language_balanced_sampling_evens_out_languages(tiny_kg: KnowledgeGraph) -> None:
    # T:0001 has 4 English terms and 1 Spanish-labelled-as-en; T:0010 has 2 en + 1 zh term
    sampler = KGSampler(tiny_kg, k=4, m=2, synonym_share=1.0, seed=0, lang_balanced=True)
    rng = np.random.default_rng(0)
    concept = sampler.index["T:0010"]
    drawn = Counter(
        any(ord(ch) > 0x2E80 for ch in term) for term in sampler._draw_terms(rng, concept, 2000)
    )
    assert drawn[True] / 2000 == pytest.approx(0.5, abs=0.05)  # 1/3 without balancing


def test_semantic_type_targets(tiny_kg: KnowledgeGraph) -> None:
    sampler = KGSampler(tiny_kg, k=4, m=2, seed=0, with_types=True)
    b = sampler.batch(0)
    assert b.sty is not None and b.sty.shape == (8, len(sampler.type_labels))
    assert sampler.type_labels == ["cardio", "lung", "other"]
    assert np.allclose(b.sty.sum(1).numpy(), 1.0)


@pytest.mark.parametrize(
    ("k", "m", "message"),
    [
        (1, 2, "k must be at least 4"),
        (3, 2, "k must be at least 4"),
        (16, 5, r"m must satisfy 2 <= m <= sqrt\(k\)"),
        (16, 1, "m must"),
    ],
)
def test_impossible_settings_fail_fast(
    tiny_kg: KnowledgeGraph, k: int, m: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        KGSampler(tiny_kg, k=k, m=m)
    assert math.isqrt(16) == 4


def test_when_m_does_not_divide_k_every_triplet_still_appears_m_times(
    tiny_kg: KnowledgeGraph,
) -> None:
    sampler = KGSampler(tiny_kg, k=11, m=3, synonym_share=0.5, seed=1)
    for step in range(5):
        b = sampler.batch(step)
        assert len(b.terms) == 22
        slots = list(
            zip(b.labels[:11].tolist(), b.labels[11:].tolist(), b.rel_idx.tolist(), strict=True)
        )
        runs, start = [], 0  # groups are contiguous runs of one (head, tail, relation)
        for i in range(1, 12):
            if i == 11 or slots[i] != slots[start]:
                runs.append(i - start)
                start = i
        assert min(runs) >= 3, runs
