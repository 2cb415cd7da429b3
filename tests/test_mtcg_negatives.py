"""MTCG items and negative strategies: every negative names a wrong concept; tree negatives are
siblings/cousins; keyword negatives swap a keyword; online negatives follow the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from termnorm.errors import InputFormatError
from termnorm.kg import KnowledgeGraph
from termnorm.training import NegativeKind
from termnorm.training.mtcg_data import ConceptDictionary, build_mtcg_items
from termnorm.training.negatives import (
    OnlineNegatives,
    build_negatives,
    keyword_replacements,
    keyword_spans,
    read_keyword_sets,
    tree_pools,
)

MENTIONS = [
    ("heart attacks", ("T:0001",)),
    ("high bp", ("T:0002",)),
    ("heart attacks", ("T:0001",)),  # duplicate
    ("asthma and pneumonia", (["T:0004", "T:0006"])),
    ("lung trouble", ("T:0009",)),
    ("nothing", ("-1",)),
    ("unknown", ("T:9999",)),
]


def _items(kg: KnowledgeGraph):  # type: ignore[no-untyped-def]
    dictionary = ConceptDictionary.from_kg(kg)
    return dictionary, build_mtcg_items(dictionary, MENTIONS)


def _gold_texts(dictionary: ConceptDictionary, gold: frozenset[int]) -> set[str]:
    return {
        t.casefold()
        for t, c in zip(dictionary.term_texts, dictionary.term_concepts, strict=True)
        if int(c) in gold
    }


def test_items_keep_composites_whole_and_count_drops(tiny_kg: KnowledgeGraph) -> None:
    dictionary, data = _items(tiny_kg)
    composite = [it for it in data.items if it.mention == "asthma and pneumonia"]
    assert len(composite) == 2 and {it.codes for it in composite} == {2}
    assert composite[0].gold == composite[1].gold == {it.concept for it in composite}
    assert data.mentions == 4
    assert data.dropped == {"duplicate": 1, "unlinkable": 1, "gold ID not in KG": 1}
    assert data.code_counts() == {"codes_1": 3, "codes_2": 1, "codes_3+": 0}
    # alternative IDs resolve to the concept
    assert dictionary.keys["0001"] == dictionary.concept_ids.index("T:0001")


@pytest.mark.parametrize("kind", ["random", "tfidf", "tree", "online"])
def test_every_strategy_gives_k_wrong_negatives(tiny_kg: KnowledgeGraph, kind: str) -> None:
    dictionary, data = _items(tiny_kg)
    strategy = build_negatives(NegativeKind(kind), tiny_kg, dictionary, data.items, 3, seed=1)
    for epoch in (0,):
        for i, it in enumerate(data.items):
            negs = strategy.negatives(i, epoch)
            assert len(negs) == 3 and len(set(negs)) == 3
            assert not {n.casefold() for n in negs} & _gold_texts(dictionary, it.gold)
            owners = {
                c for n in negs for c in dictionary.text_concepts[" ".join(n.casefold().split())]
            }
            assert owners.isdisjoint(it.gold)


def test_tfidf_negatives_are_the_nearest_wrong_concepts(tiny_kg: KnowledgeGraph) -> None:
    dictionary, data = _items(tiny_kg)
    strategy = build_negatives("tfidf", tiny_kg, dictionary, data.items, 2)
    lung = next(i for i, it in enumerate(data.items) if it.mention == "lung trouble")
    first = strategy.negatives(lung, 0)
    assert first[0] in {"lung infection"}  # shares "lun", "ung" with the mention
    assert strategy.negatives(lung, 3) == first  # fixed over epochs


def _tree_kg() -> KnowledgeGraph:
    names = {f"C:{i}": f"concept {i}" for i in range(1, 9)}
    concepts = [
        {"concept_id": c, "name": n, "semantic_types": [], "alt_ids": []} for c, n in names.items()
    ]
    terms = [
        {"concept_id": c, "term": n, "lang": "en", "source": "t", "is_preferred": True}
        for c, n in names.items()
    ]
    # 1 root; 2, 3 children of 1; 4, 5 children of 2; 6, 7 children of 3; 8 unrelated
    edges = [("C:2", "C:1"), ("C:3", "C:1"), ("C:4", "C:2"), ("C:5", "C:2")]
    edges += [("C:6", "C:3"), ("C:7", "C:3")]
    relations = [{"head": h, "relation": "is_a", "tail": t} for h, t in edges]
    return KnowledgeGraph.from_records(concepts, terms, relations)


def test_tree_negatives_are_siblings_then_cousins() -> None:
    kg = _tree_kg()
    dictionary = ConceptDictionary.from_kg(kg)
    data = build_mtcg_items(dictionary, [("m4", ("C:4",)), ("m2", ("C:2",))])
    pools = tree_pools(kg, dictionary, data.items)
    assert pools[0] == ["concept 5", "concept 6", "concept 7"]  # sibling, then cousins
    assert pools[1] == ["concept 3"]  # sibling; no grandparent
    strategy = build_negatives("tree", kg, dictionary, data.items, 2, seed=0)
    assert set(strategy.negatives(0, 0)) <= {"concept 5", "concept 6", "concept 7"}
    assert strategy.stats()["negative_items_completed_at_random"] == 1


def test_tree_negatives_refuse_a_kg_without_hierarchy(tiny_kg: KnowledgeGraph) -> None:
    flat = KnowledgeGraph.from_records(
        tiny_kg.concepts.to_dict("records"), tiny_kg.terms.to_dict("records"), []
    )
    dictionary = ConceptDictionary.from_kg(flat)
    data = build_mtcg_items(dictionary, [("mi", ("T:0001",))])
    with pytest.raises(ValueError, match="needs is_a"):
        build_negatives("tree", flat, dictionary, data.items, 2)


def test_keyword_replacement_swaps_one_keyword() -> None:
    sites, types = {"thyroid", "kidney", "甲状腺", "肾上腺"}, {"excision", "biopsy", "切除"}
    assert keyword_spans("Thyroid lesion excision", sites, types) == [
        (0, 7, "site"),
        (15, 23, "type"),
    ]
    swaps = keyword_replacements("Thyroid lesion excision", sites, types)
    assert set(swaps) == {
        "kidney lesion excision",
        "甲状腺 lesion excision",
        "肾上腺 lesion excision",
        "Thyroid lesion biopsy",
        "Thyroid lesion 切除",
    }
    assert "肾上腺病损切除术" in keyword_replacements("甲状腺病损切除术", sites, types)
    assert keyword_replacements("no keyword here", sites, types) == []


def test_keyword_strategy_and_vocabulary_file(tiny_kg: KnowledgeGraph, tmp_path: Path) -> None:
    vocab = tmp_path / "kw.tsv"
    vocab.write_text("# sites and types\nkeyword\tkind\nheart\tsite\nlung\tsite\ndisease\ttype\n")
    sites, types = read_keyword_sets(vocab)
    assert sites == {"heart", "lung"} and types == {"disease"}
    dictionary = ConceptDictionary.from_kg(tiny_kg)
    data = build_mtcg_items(dictionary, [("lung trouble", ("T:0009",))])
    strategy = build_negatives(
        "keyword", tiny_kg, dictionary, data.items, 1, keywords=(sites, types)
    )
    # "lung disease" -> "heart disease" names the concept T:0008: a wrong concept, allowed
    assert strategy.negatives(0, 0) == ["heart disease"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("keyword\tkind\nheart\torgan\n")
    with pytest.raises(InputFormatError, match=r"bad\.tsv:2"):
        read_keyword_sets(bad)


def test_keyword_swaps_never_give_a_gold_term(tiny_kg: KnowledgeGraph) -> None:
    dictionary = ConceptDictionary.from_kg(tiny_kg)
    data = build_mtcg_items(dictionary, [("lungs", (["T:0009", "T:0008"]))])
    strategy = build_negatives(
        "keyword", tiny_kg, dictionary, data.items, 1, keywords=({"heart", "lung"}, set())
    )
    # the only swap of "lung disease" is "heart disease", a gold term here: completed at random
    assert strategy.stats()["negative_items_completed_at_random"] == 2
    for i in range(2):
        (neg,) = strategy.negatives(i, 0)
        assert neg.casefold() not in _gold_texts(dictionary, data.items[i].gold)


def test_online_negatives_follow_the_model_and_never_hold_gold(tiny_kg: KnowledgeGraph) -> None:
    dictionary, data = _items(tiny_kg)
    strategy = OnlineNegatives(dictionary, data.items, k=3, seed=0)
    assert strategy.ready(0) and not strategy.ready(1)
    with pytest.raises(RuntimeError, match="not mined"):
        strategy.negatives(0, 1)

    def model(seed: int):  # type: ignore[no-untyped-def]
        table: dict[str, np.ndarray] = {}

        def encode(texts: list[str]) -> np.ndarray:
            rng = np.random.default_rng(seed)
            for t in sorted(set(texts) - set(table)):
                table[t] = rng.normal(size=8)
            x = np.stack([table[t] for t in texts]).astype(np.float32)
            return x / np.linalg.norm(x, axis=1, keepdims=True)

        return encode

    strategy.refresh(1, model(1))
    epoch1 = [strategy.negatives(i, 1) for i in range(len(data.items))]
    strategy.refresh(2, model(2))
    epoch2 = [strategy.negatives(i, 2) for i in range(len(data.items))]
    assert epoch1 != epoch2  # another model, other negatives
    for negs, it in zip(epoch1 + epoch2, data.items + data.items, strict=True):
        assert len(negs) == 3
        assert not {n.casefold() for n in negs} & _gold_texts(dictionary, it.gold)
    state = strategy.state_dict()
    again = OnlineNegatives(dictionary, data.items, k=3, seed=0)
    again.load_state_dict(state)
    assert again.ready(2) and again.negatives(0, 2) == epoch2[0]


def test_online_negatives_are_the_nearest_wrong_terms(tiny_kg: KnowledgeGraph) -> None:
    dictionary = ConceptDictionary.from_kg(tiny_kg)
    data = build_mtcg_items(dictionary, [("lung trouble", ("T:0009",))])
    target = {"pulmonary disease", "lung infection", "anaemia", "bronchial asthma"}

    def encode(texts: list[str]) -> np.ndarray:
        # the mention sits on one axis; the target texts close to it, the gold one closest
        out = np.zeros((len(texts), 4), dtype=np.float32)
        for i, t in enumerate(texts):
            if t == "lung trouble" or t == "pulmonary disease":
                out[i] = [1, 0, 0, 0]
            elif t in target:
                out[i] = [0.9, 0.1 * (1 + sorted(target).index(t)), 0, 0]
            else:
                out[i] = [0, 0, 1, 0]
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    strategy = OnlineNegatives(dictionary, data.items, k=3)
    strategy.refresh(1, encode)
    # "pulmonary disease" is a gold term (T:0009): skipped; the next three wrong concepts
    assert strategy.negatives(0, 1) == ["anaemia", "bronchial asthma", "lung infection"]
