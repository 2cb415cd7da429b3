"""Train:O / Train:OD corpora (the |D|/|O| ratio) and anchor–positive batches."""

from __future__ import annotations

from collections import Counter

import pytest

from termnorm.kg import KnowledgeGraph
from termnorm.training.triplet_data import (
    AnchorPositiveSampler,
    LabelledText,
    TrainData,
    build_triplet_corpus,
    repeat_to_ratio,
)

MENTIONS = [
    ("heart attacks", ("0001",)),  # bare local ID finds T:0001
    ("high bp", ("T:0002",)),
    ("sugar", ("t:0003",)),
    ("breast and ovarian cancer", ("0001", "0002")),  # composite: dropped
    ("woven osteoid", ("-1",)),  # unlinkable: dropped
    ("zebra fever", ("9999",)),  # not in the KG: dropped
    ("  ", ("0001",)),  # empty: dropped
]


def test_train_o_is_the_ontology_synonyms(tiny_kg: KnowledgeGraph) -> None:
    corpus = build_triplet_corpus(tiny_kg, TrainData.O)
    assert len(corpus.items) == len(tiny_kg.terms)
    assert {it.source for it in corpus.items} == {"O"}
    counts = corpus.counts()
    assert counts["domain_texts"] == 0 and counts["concepts"] == 10


@pytest.mark.parametrize("ratio", [1 / 3, 2 / 3, 1.0])
def test_train_od_repeats_mentions_to_the_ratio(tiny_kg: KnowledgeGraph, ratio: float) -> None:
    corpus = build_triplet_corpus(tiny_kg, "od", MENTIONS, ratio=ratio, seed=3)
    counts = corpus.counts()
    n_o = len(tiny_kg.terms)
    assert counts["ontology_texts"] == n_o
    assert counts["domain_texts"] == round(ratio * n_o)
    domain = [it for it in corpus.items if it.source == "D"]
    per_text = Counter(it.text for it in domain)
    assert set(per_text) == {"heart attacks", "high bp", "sugar"}
    assert max(per_text.values()) - min(per_text.values()) <= 1  # whole copies + remainder
    assert {it.concept_id for it in domain} == {"T:0001", "T:0002", "T:0003"}
    assert corpus.dropped == Counter(
        {"composite": 1, "unlinkable": 1, "concept not in KG": 1, "empty text": 1}
    )


def test_default_ratio_is_one_third(tiny_kg: KnowledgeGraph) -> None:
    corpus = build_triplet_corpus(tiny_kg, TrainData.OD, MENTIONS)
    assert corpus.counts()["domain_texts"] == round(len(tiny_kg.terms) / 3)


def test_more_mentions_than_needed_are_subsampled() -> None:
    domain = [LabelledText(f"m{i}", "C:1", "D") for i in range(30)]
    out = repeat_to_ratio(domain, n_ontology=30, ratio=1 / 3, seed=0)
    assert len(out) == 10 and len({it.text for it in out}) == 10
    assert out == repeat_to_ratio(domain, n_ontology=30, ratio=1 / 3, seed=0)


def test_train_od_errors(tiny_kg: KnowledgeGraph) -> None:
    with pytest.raises(ValueError, match="Train:OD needs annotated training mentions"):
        build_triplet_corpus(tiny_kg, TrainData.OD)
    with pytest.raises(ValueError, match="found no usable training mention"):
        build_triplet_corpus(tiny_kg, TrainData.OD, [("x", ("-1",))])
    with pytest.raises(ValueError, match="ratio must be > 0"):
        build_triplet_corpus(tiny_kg, TrainData.OD, MENTIONS, ratio=0)


def test_every_anchor_has_a_positive_in_its_batch(tiny_kg: KnowledgeGraph) -> None:
    corpus = build_triplet_corpus(tiny_kg, TrainData.O)
    labels = corpus.labels
    sampler = AnchorPositiveSampler(labels, batch_size=12, texts_per_concept=3, seed=1)
    seen_anchors: list[int] = []
    for number in range(sampler.batches_per_epoch):
        batch = sampler.batch_indices(number)
        assert len(batch) <= 12 and len(batch) % 3 == 0
        for g in range(0, len(batch), 3):
            group = batch[g : g + 3]
            assert len({labels[i] for i in group}) == 1  # anchor + 2 positives
            assert group[0] not in group[1:]
            seen_anchors.append(group[0])
    # one epoch visits every text of a multi-text concept once as an anchor
    assert sorted(seen_anchors) == list(range(len(labels)))


def test_sampler_is_counter_based_and_skips_single_text_concepts() -> None:
    labels = [0, 0, 1, 1, 1, 2]  # concept 2 has one text: never an anchor
    a = AnchorPositiveSampler(labels, batch_size=4, seed=5)
    b = AnchorPositiveSampler(labels, batch_size=4, seed=5)
    first = [a.batch_indices(n) for n in range(6)]
    assert [b.batch_indices(n) for n in (5, 2, 0)] == [first[5], first[2], first[0]]
    assert all(5 not in batch for batch in first)
    assert a.batches_per_epoch == 3  # 5 anchors, 2 groups per batch
    assert first[:3] != [
        AnchorPositiveSampler(labels, 4, seed=6).batch_indices(n) for n in range(3)
    ]


def test_sampler_errors() -> None:
    with pytest.raises(ValueError, match=r"texts_per_concept \(K\) must be ≥ 2"):
        AnchorPositiveSampler([0, 0, 1, 1], batch_size=8, texts_per_concept=1)
    with pytest.raises(ValueError, match="fewer than 2 groups"):
        AnchorPositiveSampler([0, 0, 1, 1], batch_size=3)
    with pytest.raises(ValueError, match="at least 2 concepts with 2 or more texts"):
        AnchorPositiveSampler([0, 0, 1, 2], batch_size=4)
