"""The model-selection grid: ranks, the two composite rules, and a tiny end-to-end run."""

from __future__ import annotations

import pytest

from _index_fakes import KeyedEncoder
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.lab.sieve_grid import (
    PAPER_TABLE4,
    GridDataset,
    _cell,
    average_ranks,
    grid_markdown,
    run_sieve_grid,
)
from termnorm.mentions import make_mention
from termnorm.mentions.synonyms import mention_pairs
from termnorm.search.strategies import PAPER_STRATEGIES, parse_strategy


def test_average_ranks_share_ties() -> None:
    ranks = average_ranks({"a": [0.9, 0.5], "b": [0.9, 0.7], "c": [0.1, 0.7]})
    # column 1: a, b tie for 1-2 → 1.5, c 3; column 2: b, c tie → 1.5, a 3
    assert ranks == {"a": 2.25, "b": 1.5, "c": 2.25}


def test_cell_pools_simple_and_composite_mentions_under_both_rules() -> None:
    metrics = {
        "normalize_acc@1": 0.8,
        "normalize_n_simple": 10.0,
        "normalize_n_composite": 2.0,
        "normalize_composite_acc@1": 1.0,
        "normalize_composite_parts_acc@1": 0.5,
    }
    cell = _cell(metrics)
    assert cell.n == 12
    assert cell.simple == pytest.approx((8 + 2) / 12)
    assert cell.parts == pytest.approx((8 + 1) / 12)


def test_mention_pairs_split_composites_with_parts() -> None:
    split = make_mention("a and b", "X:1|X:2", "d", parts=("a x", "b x"))
    whole = make_mention("c and d", "X:1|X:2", "d")
    plain = make_mention("e", "X:3", "d")
    assert mention_pairs([split, whole, plain]) == [
        ("a x", ("X:1",)),
        ("b x", ("X:2",)),
        ("c and d", ("X:1", "X:2")),
        ("e", ("X:3",)),
    ]


def test_grid_end_to_end_on_the_tiny_kg(tiny_kg: KnowledgeGraph) -> None:
    # every text gets its own seeded random unit vector: equal strings match with cos 1
    encoder = KeyedEncoder(table={})
    index = TermIndex.build(tiny_kg, encoder, backend="exact", show_progress=False)
    dev = [
        make_mention("heart attack", "0001", "d"),
        make_mention("HTN", "T:0002", "d"),
        make_mention("asthma, pneumonia", "T:0004|T:0006", "d"),  # composite, two exact parts
        make_mention("nothing", "-1", "d"),  # unlinkable: not scored
    ]
    train = [("heart attack", ("T:0001",)), ("HTN", ("T:0002",))]
    data = GridDataset("tiny dev", dev, train)
    result = run_sieve_grid({"O": (index, encoder)}, [data])
    assert result.strategies == [str(s) for s in PAPER_STRATEGIES]
    assert len(result.cells) == 14
    # the simple texts and the composite's parts are ontology terms: O-T finds them all;
    # the composite's whole text is a random vector, right by the simple rule only by chance
    o_t = result.cells[("O", "o-t", "tiny dev")]
    assert o_t.n == 3 and o_t.parts == 1.0 and o_t.simple in (2 / 3, 1.0)
    # D-T only knows the two training mentions; the composite's parts are not among them
    assert result.cells[("O", "d-t", "tiny dev")].parts == pytest.approx(2 / 3)
    # the sieve D-T + O-T trusts D for exact matches and falls back to O otherwise
    assert result.cells[("O", "d-t+o-t", "tiny dev")].parts == 1.0
    table = grid_markdown(result, {"O": "O"})
    assert table.count("\n") == 2 + 14
    assert "| O | D-T + OD-T |" in table and "91.36" in table  # the paper's figure beside ours


def test_paper_table_covers_both_blocks() -> None:
    for group in ("O", "OD"):
        assert {s for g, s in PAPER_TABLE4 if g == group} == {str(s) for s in PAPER_STRATEGIES}
    assert parse_strategy("d-t+od-t") in PAPER_STRATEGIES
