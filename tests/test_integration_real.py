"""End to end on real data: built-in HPO + the real MiniLM + GSC+ dev mentions.

To stay within CI time the dictionary is the HPO concepts that GSC+ dev links to plus a seeded
sample of 3,000 other HPO concepts (all of their terms), so the search is still a real search
among many near-miss phenotypes. Skips when ../shared/benchmarks is absent.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import require_benchmarks

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hpo_subset_kg():  # type: ignore[no-untyped-def]
    from termnorm.kg import KGFormat, KnowledgeGraph, SourceSpec, build_kg
    from termnorm.mentions import read_mentions

    gsc = require_benchmarks("hpo_gscplus", "GSCplus_dev_gold.tsv")
    kg, _ = build_kg([SourceSpec(KGFormat.HPO, None, {"with_annotations": False})])
    gold = {g for m in read_mentions(gsc) for g in m.gold_ids}
    ids = sorted(kg.concepts["concept_id"])
    keep = {c for c in ids if c in gold}
    keep |= set(random.Random(0).sample(ids, 3000))
    sub = KnowledgeGraph(
        concepts=kg.concepts[kg.concepts["concept_id"].isin(keep)].reset_index(drop=True),
        terms=kg.terms[kg.terms["concept_id"].isin(keep)].reset_index(drop=True),
        relations=kg.relations.iloc[0:0],
    )
    return sub, gsc


def test_minilm_beats_exact_match_on_gscplus_dev(hpo_subset_kg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from termnorm.encoders import TermEncoder
    from termnorm.evaluation import NormalizationEvaluator
    from termnorm.index import TermIndex
    from termnorm.mentions import read_mentions
    from termnorm.search import Normalizer
    from termnorm.search.lexical import make_lexical_matcher

    kg, gsc = hpo_subset_kg
    encoder = TermEncoder.load(None, device="cpu")
    index = TermIndex.build(kg, encoder, show_progress=False)
    index.save(tmp_path / "idx")
    reloaded = TermIndex.load(tmp_path / "idx")
    evaluator = NormalizationEvaluator(read_mentions(gsc))

    embedding = evaluator(Normalizer(reloaded, encoder))
    exact = evaluator(make_lexical_matcher("exact", kg))

    assert embedding["normalize_n"] == 173
    assert embedding["normalize_acc@1"] > exact["normalize_acc@1"]
    assert embedding["normalize_acc@5"] >= embedding["normalize_acc@1"]
    # a concept search over the same index is a different, also working, matcher
    concept = evaluator(Normalizer(reloaded, encoder, mode="concept"))
    assert concept["normalize_acc@5"] > exact["normalize_acc@5"] - 0.2
