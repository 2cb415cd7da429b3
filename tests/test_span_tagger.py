"""The span tagger: BIO tags from character spans and back, training on the tiny BERT until
it finds its training mentions, the folder and its refusal, and the detector on hostile text."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer

from _tagger_fixtures import DOCUMENTS, gscplus_text, int8_or_skip
from conftest import require_benchmarks
from termnorm.annotate.tagger import SpanTagger, predict_spans
from termnorm.encoders.bio import (
    IGNORE,
    LABELS,
    B,
    I,
    O,
    bio_tags,
    decode_bio,
    disjoint_spans,
)
from termnorm.encoders.token_tagger import CARD_NAME, TrainedTagger, load_tagger, save_tagger
from termnorm.encoders.transformer import default_model_path
from termnorm.errors import ArtifactMismatchError, InputFormatError
from termnorm.training.span_tagger import span_scores, train_span_tagger
from termnorm.training.tagger_config import TaggerTrainConfig
from termnorm.training.tagger_data import (
    TaggedDocument,
    holdout_split,
    read_tagged_documents,
    tagged_chunks,
)


# ------------------------------------------------------------------ BIO tags
def test_bio_tags_mark_the_pieces_of_each_span_and_skip_special_tokens() -> None:
    # [CLS] "heart" "attack" "and" "as" "##thma" [SEP]
    offsets = [(0, 0), (0, 5), (6, 12), (13, 16), (17, 19), (19, 23), (0, 0)]
    assert bio_tags(offsets, [(0, 12), (17, 23)]) == [IGNORE, B, I, O, B, I, IGNORE]


def test_a_span_starting_inside_a_word_piece_takes_the_whole_piece() -> None:
    offsets = [(0, 0), (0, 5), (5, 9), (0, 0)]  # "hyper" "##tension"
    assert bio_tags(offsets, [(2, 9)]) == [IGNORE, B, I, IGNORE]
    assert bio_tags(offsets, [(6, 9)]) == [IGNORE, O, B, IGNORE]


def test_adjacent_spans_start_with_b_each() -> None:
    offsets = [(0, 3), (4, 7)]
    assert bio_tags(offsets, [(0, 3), (4, 7)]) == [B, B]
    assert bio_tags(offsets, [(0, 7)]) == [B, I]


def test_disjoint_spans_keep_the_longer_of_overlapping_ones() -> None:
    assert disjoint_spans([(0, 10), (2, 5), (8, 14), (20, 22), (20, 22)]) == [(0, 10), (20, 22)]


def test_decode_starts_a_span_at_an_i_without_b_and_trims_whitespace() -> None:
    text = "a bb  cc d"
    offsets = [(0, 1), (1, 2), (2, 4), (4, 6), (6, 8), (9, 10)]
    # I after O starts a span; B inside a run starts a new one; whitespace trimmed
    assert decode_bio([O, I, I, I, B, O], offsets, text) == [(2, 4), (6, 8)]
    assert decode_bio([I, O, O, O, O, I], offsets, text) == [(0, 1), (9, 10)]
    assert decode_bio([O, O, O, O, O, O], offsets, text) == []


HOSTILE = (
    "Cafe\u0301 owner\u00a0with heart\u00a0attack \U0001f600;\r\n"
    "his mother had asthma\u0301 and\u00a0anemia.\r\n"
)


@pytest.mark.parametrize(
    "mentions", [["heart\u00a0attack", "asthma\u0301"], ["Cafe\u0301", "anemia"]]
)
def test_tags_of_gold_spans_decode_back_to_them_on_hostile_text(
    tiny_bert_path: Path, mentions: list[str]
) -> None:
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_path))
    spans = sorted((HOSTILE.index(m), HOSTILE.index(m) + len(m)) for m in mentions)
    enc = tokenizer(HOSTILE, return_offsets_mapping=True)
    offsets = [tuple(o) for o in enc["offset_mapping"]]
    decoded = decode_bio(bio_tags(offsets, spans), offsets, HOSTILE)
    assert decoded == spans
    assert [HOSTILE[s:e] for s, e in decoded] == mentions


def test_decode_drops_a_span_that_starts_or_ends_inside_a_word() -> None:
    text = "vesicula (x-ray) 12ab"
    offsets = [(0, 3), (3, 8), (9, 10), (10, 11), (11, 12), (12, 16), (17, 19), (19, 21)]
    assert decode_bio([B, O, O, O, O, O, O, O], offsets, text) == []  # "ves|icula"
    assert decode_bio([O, B, O, O, O, O, O, O], offsets, text) == []  # "ves|icula"
    assert decode_bio([B, I, O, O, O, O, O, B], offsets, text) == [(0, 8)]  # "12|ab" dropped
    # punctuation is an edge: "x" of "x-ray" and "(" around it are whole words
    assert decode_bio([O, O, O, B, O, O, B, I], offsets, text) == [(10, 11), (17, 21)]


def test_decode_keeps_the_combining_mark_after_a_piece() -> None:
    text = "Cafe\u0301 x"
    assert decode_bio([B], [(0, 4)], text) == [(0, 5)]


# ------------------------------------------------------------------ data
def test_holdout_split_is_seeded_and_disjoint() -> None:
    docs = [TaggedDocument(str(i), "x", ()) for i in range(20)]
    train, held = holdout_split(docs, 0.1, seed=3)
    assert len(held) == 2 and len(train) == 18
    assert {d.doc_id for d in train}.isdisjoint(d.doc_id for d in held)
    assert holdout_split(docs, 0.1, seed=3) == (train, held)
    assert holdout_split(docs, 0.0, seed=3) == (docs, [])


def test_read_tagged_documents_from_gscplus_trims_and_checks_offsets(tmp_path: Path) -> None:
    gold = tmp_path / "gold.tsv"
    gold.write_text(
        "1\nSeizures and  ataxia.\n0\t8\tSeizures\tHP:1\n13\t20\t ataxia\tHP:2\n\n"
        "2\nNothing here.\n"
    )
    docs = read_tagged_documents([gold], "gscplus")
    assert [(d.doc_id, d.spans) for d in docs] == [("1", ((0, 8), (14, 20))), ("2", ())]
    gold.write_text("1\nShort.\n0\t80\tSeizures\tHP:1\n")
    with pytest.raises(InputFormatError, match="outside its document"):
        read_tagged_documents([gold], "gscplus")


def test_long_documents_are_cut_into_labelled_chunks(tiny_bert_path: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_path))
    text = " ".join(["the asthma"] * 10)  # character pieces: far over 24 word pieces
    spans = tuple((i * 11 + 4, i * 11 + 10) for i in range(10))
    chunks = tagged_chunks([TaggedDocument("1", text, spans)], tokenizer, 24, 4)
    assert len(chunks) > 3
    assert all(len(c.input_ids) <= 24 and len(c.labels) == len(c.input_ids) for c in chunks)
    assert all(c.labels[0] == IGNORE and c.labels[-1] == IGNORE for c in chunks)
    assert sum(label == B for c in chunks for label in c.labels) >= 10


# ------------------------------------------------------------------ training + folder
TINY_CONFIG = TaggerTrainConfig(
    epochs=40,
    batch_size=3,
    learning_rate=2e-2,
    head_learning_rate=3e-2,
    warmup=0.0,
    max_length=64,
    stride=16,
    dropout=0.0,
    dev_fraction=0.0,
)


@pytest.fixture(scope="module")
def trained(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny tagger trained on the three sentences, saved as a folder."""
    from termnorm.training.span_tagger import train_tagger_from_files

    corpus = tmp_path_factory.mktemp("corpus") / "train.tsv"
    corpus.write_text(gscplus_text(DOCUMENTS), encoding="utf-8")
    out = tmp_path_factory.mktemp("ner") / "tagger"
    folder, result = train_tagger_from_files(
        [corpus],
        out,
        "gscplus",
        config=TINY_CONFIG,
        model_path=tiny_bert_path,
        progress=False,
        predict=predict_spans,
    )
    assert result.losses[-1] < result.losses[0] / 10
    return folder


def test_a_tiny_tagger_overfits_three_sentences_and_finds_their_spans(trained: Path) -> None:
    tagger = SpanTagger.load(trained, threads=1)
    for doc in DOCUMENTS:
        spans = tagger.detect(doc.text)
        assert [(s.start, s.end) for s in spans] == list(doc.spans)
        assert all(s.detector == "tagger" and s.concept_ids == () for s in spans)
        assert all(doc.text[s.start : s.end] == s.text for s in spans)


def test_bf16_runtime_is_refused_without_native_bfloat16(
    trained: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from termnorm.encoders import forward
    from termnorm.encoders.runtime import RuntimeUnavailableError

    monkeypatch.setattr(forward, "bf16_supported", lambda device: False)
    with pytest.raises(RuntimeUnavailableError, match=r"no native bfloat16.*--ner-runtime torch"):
        SpanTagger.load(trained, bf16=True)


def test_bf16_runtime_finds_the_spans_fp32_finds(trained: Path) -> None:
    from termnorm.encoders.forward import bf16_supported

    if not bf16_supported(torch.device("cpu")):
        pytest.skip("this CPU has no native bfloat16 (AVX512-BF16 or AMX): bf16 is refused here")
    fp32, bf16 = SpanTagger.load(trained), SpanTagger.load(trained, bf16=True)
    assert bf16.bf16 and not fp32.bf16
    for doc in DOCUMENTS:
        assert bf16.detect(doc.text) == fp32.detect(doc.text)


def test_int8_runtime_finds_the_spans_fp32_finds(trained: Path) -> None:
    int8_or_skip()
    fp32, int8 = SpanTagger.load(trained, threads=1), SpanTagger.load(trained, int8=True)
    assert int8.int8 is not None and fp32.int8 is None
    assert int8.int8.graph.parent.parent == trained / "termnorm_onnx"  # kept in the folder
    for doc in DOCUMENTS:
        spans = int8.detect(doc.text)
        assert spans == fp32.detect(doc.text)
        assert [(s.start, s.end) for s in spans] == list(doc.spans)
    again = SpanTagger.load(trained, int8=True)  # the cached graph, not a new export
    assert again.int8 is not None and again.int8.graph == int8.int8.graph


def test_int8_runtime_is_refused_where_no_int8_layout_is_exact(
    trained: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from termnorm.encoders import int8_kernel
    from termnorm.errors import Int8KernelError

    def saturating() -> int8_kernel.Int8Kernel:
        raise Int8KernelError("not exact on this CPU in any layout; use --runtime torch")

    monkeypatch.setattr(int8_kernel, "int8_kernel", saturating)
    with pytest.raises(Int8KernelError, match="use --runtime torch"):
        SpanTagger.load(trained, int8=True)


def test_int8_runtime_is_refused_when_its_tags_leave_the_fp32_ones(
    trained: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from termnorm.encoders import tagger_onnx
    from termnorm.errors import RuntimeFidelityError

    int8_or_skip()
    monkeypatch.setattr(tagger_onnx, "MIN_TAG_AGREEMENT", 1.01)  # no graph reaches it
    with pytest.raises(RuntimeFidelityError, match=r"fp32 tag on .*use --ner-runtime torch"):
        SpanTagger.load(trained, int8=True)


class _KeywordNet(torch.nn.Module):
    """A stand-in network with known answers: ``B`` on the word piece ``first``, ``I`` on
    ``then``, ``O`` elsewhere (tests the windows and chunks, not the learning)."""

    def __init__(self, first: int, then: int) -> None:
        super().__init__()
        self.labels = LABELS
        self.first, self.then = first, then
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros((*input_ids.shape, 3))
        logits[..., O] = 1.0
        logits[..., B] += 2.0 * (input_ids == self.first)
        logits[..., I] += 2.0 * (input_ids == self.then)
        return logits


def _keyword_tagger(max_length: int) -> SpanTagger:
    tokenizer = AutoTokenizer.from_pretrained(str(default_model_path()))
    first, then = tokenizer.convert_tokens_to_ids(["heart", "attack"])
    net = _KeywordNet(first, then)
    card = {"max_length": max_length, "stride": 4}
    return SpanTagger(TrainedTagger(net, tokenizer, card, Path(".")), batch_size=3)  # type: ignore[arg-type]


def test_every_mention_of_a_long_hostile_document_is_found_once() -> None:
    tagger = _keyword_tagger(max_length=24)
    parts = [f"Case {i}: heart\u00a0attack \U0001f600 in Cafe\u0301 {i}.\r\n" for i in range(30)]
    parts[7] = "A very long sentence " + "without any stop " * 30 + "ends in heart attack.\r\n"
    text = "".join(parts)
    spans = tagger.detect(text)
    assert len(spans) == 30
    assert all(text[s.start : s.end] == s.text for s in spans)
    assert {s.text for s in spans} == {"heart\u00a0attack", "heart attack"}


def test_a_window_longer_than_the_model_is_chunked_and_decoded_once() -> None:
    tagger = _keyword_tagger(max_length=8)
    text = "no " * 5 + "heart attack" + " no" * 5 + " heart attack"
    (spans,) = tagger.predict([text])
    assert [(s.start, s.end) for s in spans] == [(15, 27), (43, 55)]


def test_the_card_says_what_made_the_tagger(trained: Path, tiny_bert_path: Path) -> None:
    card = json.loads((trained / CARD_NAME).read_text())
    assert card["kind"] == "span-tagger" and card["format_version"] == 1
    assert card["labels"] == ["O", "B", "I"]
    assert card["base_model"]["path"] == str(tiny_bert_path)
    assert len(card["base_model"]["fingerprint"]) == 64
    assert card["corpora"][0]["format"] == "gscplus" and card["corpora"][0]["role"] == "train"
    assert card["documents"] == {"train": 3, "dev": 0, "dev_source": "held out 0 of train"}
    assert card["mentions"]["train"] == 4
    assert card["epochs_run"] == 40 and card["training"]["seed"] == 0
    assert {"torch", "transformers", "tokenizers"} <= set(card["versions"])


def test_a_saved_tagger_loads_back_with_the_same_predictions(trained: Path, tmp_path: Path) -> None:
    first = load_tagger(trained)
    copy = save_tagger(first.model, first.tokenizer, first.card, tmp_path / "copy")
    second = load_tagger(copy)
    text = DOCUMENTS[1].text
    assert SpanTagger(second).detect(text) == SpanTagger(first).detect(text)
    assert not list(tmp_path.glob(".copy.tmp-*"))  # written atomically


def test_a_folder_that_is_not_a_tagger_is_refused(trained: Path, tmp_path: Path) -> None:
    with pytest.raises(
        ArtifactMismatchError, match=r"not a termnorm span tagger folder.*ner train"
    ):
        SpanTagger.load(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / CARD_NAME).write_text(json.dumps({"format_version": 1, "kind": "ranker"}))
    with pytest.raises(ArtifactMismatchError, match="not a span tagger"):
        load_tagger(other)
    (other / CARD_NAME).write_text(json.dumps({"format_version": 1, "kind": "span-tagger"}))
    with pytest.raises(ArtifactMismatchError, match="has no encoder"):
        load_tagger(other)


def test_training_with_dev_documents_keeps_the_best_epoch(tiny_bert_path: Path) -> None:
    config = TaggerTrainConfig(epochs=3, batch_size=4, max_length=64, stride=16, patience=1)
    result = train_span_tagger(
        DOCUMENTS, DOCUMENTS[:1], config, tiny_bert_path, progress=False, predict=predict_spans
    )
    assert 1 <= result.epochs_run <= 3 and len(result.dev) == result.epochs_run
    f1s = [d["f1"] for d in result.dev]
    assert result.best_dev["f1"] == max(f1s) and f1s.index(max(f1s)) == result.best_epoch - 1


def test_dev_scoring_tags_the_dev_documents_with_the_predictor_it_is_given(
    tiny_bert_path: Path,
) -> None:
    """Training never imports the annotate room: the face hands it the predictor."""
    calls: list[list[str]] = []

    def gold(
        model: object, tokenizer: object, texts: Sequence[str], *_: int
    ) -> list[list[tuple[int, int]]]:
        calls.append(list(texts))
        return [list(DOCUMENTS[0].spans)]

    config = TaggerTrainConfig(epochs=2, batch_size=4, max_length=64, stride=16, patience=5)
    result = train_span_tagger(
        DOCUMENTS, DOCUMENTS[:1], config, tiny_bert_path, False, predict=gold
    )
    assert calls == [[DOCUMENTS[0].text]] * 2
    assert [d["f1"] for d in result.dev] == [1.0, 1.0] and result.best_epoch == 1


def test_span_scores_are_exact_span_micro_averages() -> None:
    scores = span_scores([[(0, 3), (5, 8)], [(1, 2)]], [[(0, 3), (5, 9)], []])
    assert scores == {"precision": 0.5, "recall": pytest.approx(1 / 3), "f1": 0.4}


def test_config_refuses_bad_settings() -> None:
    with pytest.raises(ValueError, match="stride"):
        TaggerTrainConfig(max_length=16, stride=14)
    with pytest.raises(ValueError, match="epochs"):
        TaggerTrainConfig(epochs=0)


@pytest.mark.slow
def test_ncbi_train_documents_read_with_their_mentions() -> None:
    path = require_benchmarks("ncbi_disease", "NCBItrainset_corpus.txt")
    docs = read_tagged_documents([path])
    assert len(docs) == 592
    assert sum(len(d.spans) for d in docs) > 5000
    assert all(d.text[s:e].strip() == d.text[s:e] for d in docs for s, e in d.spans)


def test_a_time_budget_stops_training_after_the_step_that_passes_it(tiny_bert_path: Path) -> None:
    config = TaggerTrainConfig(epochs=5, batch_size=2, max_length=64, stride=16, max_minutes=1e-9)
    result = train_span_tagger(
        DOCUMENTS, DOCUMENTS[:1], config, tiny_bert_path, progress=False, predict=predict_spans
    )
    assert result.epochs_run == 1 and result.chunks_seen == 2 and len(result.dev) == 1
