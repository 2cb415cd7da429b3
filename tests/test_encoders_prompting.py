"""A folder's default prompt reaches the code that calls the tokenizer itself (KGE injection,
the cross-encoder ranker), with offsets that still point into the texts as given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from termnorm.encoders import TermEncoder
from termnorm.encoders.folder import prompt_config
from termnorm.encoders.prompting import text_offsets, tokenize_prompted
from termnorm.kg.keywords import KeywordVocabulary
from termnorm.mentions.contexts import MatchedSpan, Passage
from termnorm.search.stages.ranker.cross_encoder import KeywordCrossEncoder
from termnorm.search.stages.ranker.keyword_mask import encode_pairs
from termnorm.training import InjectionSource

PROMPT = "query: "
PROMPT_PIECES = ["q", "##u", "##e", "##r", "##y", ":"]  # the tiny BERT's pieces of PROMPT


@pytest.fixture()
def prompted_folder(tiny_bert_path: Path, tmp_path: Path) -> Path:
    """The tiny BERT, saved as a sentence-transformers folder with ``"query: "`` as its
    default prompt."""
    folder = TermEncoder.load(tiny_bert_path, device="cpu").save(tmp_path / "prompted")
    (folder / "config_sentence_transformers.json").write_text(json.dumps(prompt_config(PROMPT)))
    return folder


def test_offsets_leave_the_prompt_and_point_into_the_text() -> None:
    offsets = [(0, 0), (0, 5), (5, 6), (6, 10), (10, 12), (0, 0)]  # [CLS] query : ▁kal ium [SEP]
    assert text_offsets(offsets, [None, 0, 0, 0, 0, None], PROMPT) == [
        (0, 0),
        (0, 0),
        (0, 0),
        (0, 3),  # the piece that carries the prompt's last space starts the text
        (3, 5),
        (0, 0),
    ]
    assert text_offsets(offsets, [None, 0, 0, 0, 0, None], "") == offsets


def test_tokenize_prompted_puts_the_prompt_first_and_maps_offsets_back(
    prompted_folder: Path,
) -> None:
    tokenizer = TermEncoder.load(prompted_folder, device="cpu").tokenizer
    text = "lung mass"
    enc = tokenize_prompted(
        tokenizer, [text], PROMPT, return_offsets_mapping=True, return_special_tokens_mask=True
    )
    tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    assert tokens[: 1 + len(PROMPT_PIECES)] == ["[CLS]", *PROMPT_PIECES]
    assert enc["special_tokens_mask"][0] == [1] * 7 + [0] * 8 + [1]
    spans = enc["offset_mapping"][0]
    words = [text[s:e] for s, e in spans[7:-1]]
    assert words == ["l", "u", "n", "g", "m", "a", "s", "s"]
    assert spans[1:7] == [(0, 0)] * 6


def test_a_prompt_is_refused_with_overflowing_chunks(tiny_bert_path: Path) -> None:
    tokenizer = TermEncoder.load(tiny_bert_path, device="cpu").tokenizer
    with pytest.raises(ValueError, match="opens the first chunk of an overflowing text only"):
        tokenize_prompted(tokenizer, ["x"], PROMPT, return_overflowing_tokens=True)


def test_kge_injection_reads_the_prompt_and_finds_mentions_after_it(
    prompted_folder: Path,
) -> None:
    encoder = TermEncoder.load(prompted_folder, device="cpu")
    assert encoder.prompt == PROMPT
    text = "the lung problem 1 was seen"
    start = text.index("lung problem 1")
    passage = Passage(text, (MatchedSpan(start, start + 14, "L", "lung problem 1"),))
    src = InjectionSource(
        [passage, passage],
        encoder.tokenizer,
        {"L": 0},
        length=64,
        per_batch=2,
        seed=0,
        prompt=PROMPT,
    )
    for step in range(5):
        batch = src.batch(step)
        ids = batch.tokens["input_ids"][0]
        original = batch.mlm_labels[0].clone()
        kept = original == -100
        original[kept] = ids[kept]  # the unmasked ids: the passage as tokenized
        tokens = encoder.tokenizer.convert_ids_to_tokens(original)
        assert tokens[1:7] == PROMPT_PIECES
        assert not bool((batch.mlm_labels[0][1:7] != -100).any())  # the prompt is never masked
        mention = [t for t, m in zip(tokens, batch.mention_index[0], strict=True) if m >= 0]
        assert "".join(mention).replace("##", "") == "lungproblem1"


def test_the_ranker_prompts_both_texts_and_flags_only_their_keywords(
    prompted_folder: Path, tmp_path: Path
) -> None:
    vocab = KeywordVocabulary(frozenset({"kidney"}), frozenset({"cancer"}), "en")
    model = KeywordCrossEncoder.from_pretrained(prompted_folder, vocab)
    assert model.prompt == PROMPT
    batch = model.tokenize(["kidney x"], ["a cancer"])
    tokens = model.tokenizer.convert_ids_to_tokens(batch["input_ids"][0])
    assert tokens[:9] == ["[CLS]", "[PS]", "[PT]", *PROMPT_PIECES]
    second = tokens.index("[SEP]") + 1
    assert tokens[second : second + 6] == PROMPT_PIECES
    sites = [t for t, f in zip(tokens, batch["site"][0], strict=True) if f]
    types = [t for t, f in zip(tokens, batch["type"][0], strict=True) if f]
    assert "".join(sites).replace("##", "") == "kidney"
    assert "".join(types).replace("##", "") == "cancer"
    saved = model.save(tmp_path / "ranker")
    assert KeywordCrossEncoder.load(saved, vocab).prompt == PROMPT
    unprompted = encode_pairs(model.tokenizer, ["kidney x"], ["a cancer"], 64, vocab)
    assert len(unprompted["input_ids"][0]) == len(batch["input_ids"][0]) - 12
