"""Contextual mentions: dictionary matching, marked windows, passages, corpora; and the
encoders' mention markers (a marked text is pooled over its mention only)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conftest import require_benchmarks
from termnorm.encoders import TermEncoder, add_mention_markers
from termnorm.encoders.markers import mention_mask
from termnorm.errors import EmptyResultError, InputFormatError
from termnorm.kg import KnowledgeGraph
from termnorm.mentions.contexts import (
    TermDictionary,
    contextual_mentions,
    find_mentions,
    mark_mention,
    mention_passages,
    read_corpus,
)


def test_dictionary_drops_short_and_ambiguous_surfaces() -> None:
    pairs = [("Heart attack", "C1"), ("MI", "C1"), ("cold", "C2"), ("Cold", "C3"), ("flu", "C4")]
    d = TermDictionary.from_pairs(pairs)
    assert d.concept_of == {"heart attack": "C1", "flu": "C4"}
    assert d.counts == {"terms": 5, "kept": 2, "short": 1, "ambiguous": 1}
    assert d.max_words == 2


def test_matching_is_longest_first_case_folded_and_non_overlapping() -> None:
    d = TermDictionary.from_pairs(
        [("heart disease", "C1"), ("congenital heart disease", "C2"), ("disease", "C3")]
    )
    text = "Congenital Heart Disease, then heart disease; no diseases."
    spans = find_mentions(text, d)
    assert [(text[s.start : s.end], s.concept_id) for s in spans] == [
        ("Congenital Heart Disease", "C2"),
        ("heart disease", "C1"),
    ]


def test_window_has_markers_and_fixed_words_each_side() -> None:
    text = "one two three four renal cysts five six seven eight"
    start = text.index("renal")
    out = mark_mention(text, start, start + len("renal cysts"), words=2)
    assert out == "three four [M_s] renal cysts [M_e] five six"


def test_contexts_capped_per_surface_and_counted() -> None:
    d = TermDictionary.from_pairs([("asthma", "C1"), ("migraine", "C2")])
    docs = {f"d{i}": f"Child {i} had asthma and migraine." for i in range(6)}
    corpus = contextual_mentions(docs, d, words=1, per_term=4, seed=0)
    by_key = [m.key for m in corpus.mentions]
    assert by_key.count("asthma") == 4 and by_key.count("migraine") == 4
    assert corpus.counts["matches"] == 12 and corpus.counts["over_per_term"] == 4
    assert all("[M_s]" in m.context and "[M_e]" in m.context for m in corpus.mentions)
    with pytest.raises(EmptyResultError, match="no KG term occurs"):
        contextual_mentions({"d": "nothing here"}, d)


def test_passages_keep_matches_whole_and_offsets_right() -> None:
    d = TermDictionary.from_pairs([("lung disease", "C1"), ("asthma", "C2")])
    text = "Asthma is common. Nothing here. A lung disease and asthma again in a long sentence."
    passages = mention_passages({"d": text}, d, max_words=4)
    spans = [(p.text[s.start : s.end], s.concept_id) for p in passages for s in p.spans]
    assert spans == [("Asthma", "C2"), ("lung disease", "C1"), ("asthma", "C2")]
    assert all(len(p.text.split()) <= 6 for p in passages)


def test_corpus_reader_text_and_refusals(tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("first document\n\nsecond document\n")
    assert read_corpus([plain], "text") == {
        "notes.txt:1": "first document",
        "notes.txt:3": "second document",
    }
    with pytest.raises(InputFormatError, match="pass the corpus format 'text'"):
        read_corpus([plain])
    biosyn = tmp_path / "1.concept"
    biosyn.write_text("1||0|6||Disease||asthma||D001249\n")
    with pytest.raises(InputFormatError, match="holds no document text"):
        read_corpus([biosyn], "biosyn")


@pytest.mark.slow
def test_ncbi_train_abstracts_give_contexts_without_gold_annotations(
    tiny_kg: KnowledgeGraph,
) -> None:
    path = require_benchmarks("ncbi_disease", "NCBItrainset_corpus.txt")
    docs = read_corpus([path])
    assert len(docs) > 500 and all("\t" not in t for t in docs.values())  # text lines only
    corpus = contextual_mentions(docs, TermDictionary.from_kg(tiny_kg), words=4)
    assert {m.concept_id for m in corpus.mentions} <= set(tiny_kg.concepts["concept_id"])
    assert corpus.counts["kept"] > 0


def test_marked_text_is_pooled_over_the_mention_only(tiny_bert_path: Path) -> None:
    encoder = TermEncoder.load(tiny_bert_path, pooling="mean", device="cpu", max_length=64)
    assert encoder.markers is None
    start, end = add_mention_markers(encoder)
    assert encoder.markers == (start, end)
    assert encoder.tokenizer.convert_tokens_to_ids(["[M_s]", "[M_e]"]) == [start, end]
    batch = encoder.tokenize(["ab [M_s] cd [M_e] ef", "cd"])
    mask = mention_mask(batch["input_ids"], batch["attention_mask"], encoder.markers)
    ids = batch["input_ids"][0][mask[0].bool()].tolist()
    assert encoder.tokenizer.convert_ids_to_tokens(ids) == ["c", "##d"]
    assert torch.equal(mask[1], batch["attention_mask"][1])  # no marker: every token
    left, right = encoder.encode(["ab [M_s] cd [M_e] ef", "xy [M_s] cd [M_e] zz"])
    plain = encoder.encode(["ab cd ef"])[0]
    assert float(left @ right) != pytest.approx(1.0, abs=1e-6)  # context changes the vector
    assert float(left @ plain) != pytest.approx(1.0, abs=1e-6)
    truncated = mention_mask(
        torch.tensor([[2, start, 7, 8]]), torch.ones(1, 4, dtype=torch.long), (start, end)
    )
    assert truncated.tolist() == [[0, 0, 1, 1]]  # end marker cut off: to the end of the row
