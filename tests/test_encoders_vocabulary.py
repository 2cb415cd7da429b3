"""Vocabulary extension (ext-BERT): old ids kept, new rows = mean of old pieces, fewer pieces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from _cli import run_main
from termnorm.encoders import Pooling, TermEncoder
from termnorm.encoders.vocabulary import (
    CARD_NAME,
    extend_model_folder,
    extend_vocabulary,
    old_pieces,
    tokenization_stats,
)
from termnorm.errors import ArtifactMismatchError, EmptyResultError

# the tiny BERT spells words letter by letter; these repeat whole words it lacks
ITALIAN = ["polmonare acuta", "ipotensione polmonare", "pleuropolmonare", "ipotensione"] * 5
CYRILLIC = ["жар", "жар"]  # letters the tiny vocabulary lacks: [UNK] before


def _encoder(path: Path) -> TermEncoder:
    return TermEncoder.load(path, pooling=Pooling.MEAN, device="cpu")


def test_old_pieces_is_greedy_longest_match() -> None:
    vocab = {t: i for i, t in enumerate(["pol", "po", "##mona", "##re", "##pol", "##l", "a"])}
    assert old_pieces("polmonare", vocab) == ["pol", "##mona", "##re"]
    assert old_pieces("##polmonare", vocab) == ["##pol", "##mona", "##re"]  # a continuation
    assert old_pieces("b", vocab) is None  # unspellable: [UNK]


def test_extension_keeps_old_ids_and_rows_and_composes_new_rows(tiny_bert_path: Path) -> None:
    encoder = _encoder(tiny_bert_path)
    old_vocab = encoder.tokenizer.get_vocab()
    old_rows = encoder.model.get_input_embeddings().weight.detach().clone()
    ext = extend_vocabulary(encoder, ITALIAN + CYRILLIC, size=200, min_frequency=2, seed=0)

    new_vocab = encoder.tokenizer.get_vocab()
    assert all(new_vocab[t] == i for t, i in old_vocab.items())  # every old id unchanged
    assert [new_vocab[t] for t in ext.added] == list(
        range(len(old_vocab), len(old_vocab) + len(ext.added))
    )
    assert "polmonare" in ext.added or "##polmonare" in ext.added
    rows = encoder.model.get_input_embeddings().weight.detach()
    assert rows.shape[0] == len(new_vocab) == encoder.model.config.vocab_size
    torch.testing.assert_close(rows[: len(old_vocab)], old_rows)  # old rows untouched
    composed = 0
    for token in ext.added:
        pieces = old_pieces(token, old_vocab)
        if pieces is None:
            continue
        expected = old_rows[[old_vocab[p] for p in pieces]].mean(dim=0)
        torch.testing.assert_close(rows[new_vocab[token]], expected)
        composed += 1
    assert composed == ext.composed > 0
    assert ext.random == len(ext.added) - composed
    assert ext.random >= 1 and "ж" in ext.added  # a letter the old vocabulary lacks


def test_extended_terms_take_fewer_pieces(tiny_bert_path: Path) -> None:
    encoder = _encoder(tiny_bert_path)
    before = encoder.tokenizer
    extend_vocabulary(encoder, ITALIAN + CYRILLIC, size=200)
    after = encoder.tokenizer
    assert len(after.tokenize("pleuropolmonare")) < len(before.tokenize("pleuropolmonare"))
    assert after.tokenize("xyz 123") == before.tokenize("xyz 123")  # no new token in it
    stats = tokenization_stats(before, after, {"it": sorted(set(ITALIAN)), "ru": ["жар"]})
    assert stats["it"].terms == 4 and stats["it"].fewer == 4 and stats["it"].more == 0
    assert stats["it"].pieces_after < stats["it"].pieces_before
    assert stats["ru"].unk_before == 1 and stats["ru"].unk_after == 0


def test_random_rows_are_seeded(tiny_bert_path: Path) -> None:
    a, b = _encoder(tiny_bert_path), _encoder(tiny_bert_path)
    added_a = extend_vocabulary(a, ITALIAN + CYRILLIC, size=200, seed=3).added
    added_b = extend_vocabulary(b, ["жар"], size=200, seed=3).added
    assert "ж" in added_a and "ж" in added_b  # random in both, among different companions
    rows_a, rows_b = (e.model.get_input_embeddings().weight.detach() for e in (a, b))
    vocab_a, vocab_b = a.tokenizer.get_vocab(), b.tokenizer.get_vocab()
    torch.testing.assert_close(rows_a[vocab_a["ж"]], rows_b[vocab_b["ж"]])
    c = _encoder(tiny_bert_path)
    extend_vocabulary(c, ["жар"], size=200, seed=4)
    assert not torch.equal(
        c.model.get_input_embeddings().weight[vocab_b["ж"]], rows_b[vocab_b["ж"]]
    )


def test_extended_folder_loads_back_and_encodes_alike(tiny_bert_path: Path, tmp_path: Path) -> None:
    card = extend_model_folder(
        tiny_bert_path, {"it": ITALIAN, "ru": CYRILLIC}, size=200, out=tmp_path / "ext"
    )
    saved = json.loads((tmp_path / "ext" / CARD_NAME).read_text())
    assert saved["new_size"] == card["new_size"] == card["base_size"] + len(card["added"])
    assert set(saved["stats"]) == {"it", "ru"} and saved["stats"]["it"]["fewer"] > 0
    loaded = _encoder(tmp_path / "ext")
    assert len(loaded.tokenizer) == card["new_size"]
    assert loaded.tokenizer.tokenize("polmonare") == ["polmonare"]
    in_memory = _encoder(tiny_bert_path)
    extend_vocabulary(in_memory, ITALIAN + CYRILLIC, size=200)
    texts = ["ipotensione polmonare", "жар"]
    np.testing.assert_allclose(loaded.encode(texts), in_memory.encode(texts), atol=1e-5)


def test_nothing_to_add_and_no_texts_are_errors(tiny_bert_path: Path) -> None:
    encoder = _encoder(tiny_bert_path)
    with pytest.raises(EmptyResultError, match="no texts"):
        extend_vocabulary(encoder, [], size=100)
    with pytest.raises(EmptyResultError, match="all in the base vocabulary"):
        extend_vocabulary(encoder, ["a b c"], size=5)


def test_extension_refuses_a_tokenizer_larger_than_the_embeddings(tiny_bert_path: Path) -> None:
    encoder = _encoder(tiny_bert_path)
    encoder.tokenizer.add_tokens(["[NEW]"])
    with pytest.raises(ArtifactMismatchError, match="embedding matrix"):
        extend_vocabulary(encoder, ITALIAN, size=200)


def test_cli_extend_vocab(
    tiny_bert_path: Path, tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ext"
    args = ["encoder", "extend-vocab", "--kg", str(tiny_kg_dir), "--model", str(tiny_bert_path)]
    code, stdout, _ = run_main([*args, "--lang", "en", "--size", "120", "--out", str(out)], capsys)
    assert code == 0, stdout
    assert "new:" in stdout and "en" in stdout
    assert json.loads((out / CARD_NAME).read_text())["source"]["langs"] == ["en"]
    es = ["--lang", "es", "--size", "120", "--out", str(tmp_path / "es")]
    code, _, stderr = run_main([*args, *es], capsys)
    assert code == 1 and "no terms in es" in stderr and "'en'" in stderr
