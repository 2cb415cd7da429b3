"""Model folders run as sentence-transformers runs them: each pooling mode, Dense, Normalize,
do_lower_case and max_seq_length, checked against ``SentenceTransformer(folder).encode``; and
every folder termnorm cannot run refused with a message naming what is wrong."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from conftest import build_tiny_bert
from termnorm.encoders import DEFAULT_MAX_LENGTH, Pooling, TermEncoder, read_model_folder
from termnorm.encoders.folder import prompt_config
from termnorm.errors import ArtifactMismatchError

st = pytest.importorskip("sentence_transformers")

# lengths from 1 to ~40 tokens, so padding and truncation (16 tokens below) both happen
TEXTS = [
    "mi",
    "heart attack",
    "Asthma",
    "甲状腺肿物切除术",
    "type 2 diabetes mellitus with renal complications",
    "severe " * 6 + "asthma",
]


def _bert(tiny_bert_path: Path, out: Path, lowercase: bool = True) -> Path:
    """The tiny BERT with a WordPiece tokenizer over its vocab.txt (built with ``tokenizers``,
    so that every character is a known token under transformers 4 and 5 alike)."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece
    from transformers import PreTrainedTokenizerFast

    shutil.copytree(tiny_bert_path, out)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (out / name).unlink(missing_ok=True)
    words = [w for w in (out / "vocab.txt").read_text().splitlines() if w]
    tokenizer = Tokenizer(WordPiece({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = words.index("[CLS]"), words.index("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    specials = {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]"}
    specials |= {"sep_token": "[SEP]", "mask_token": "[MASK]"}
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, **specials).save_pretrained(str(out))
    return out


@pytest.fixture(scope="module")
def bert(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny BERT with a working lower-casing tokenizer."""
    folder = _bert(tiny_bert_path, tmp_path_factory.mktemp("bert") / "bert")
    assert "[UNK]" not in TermEncoder.load(folder, device="cpu").tokenizer.tokenize(TEXTS[2])
    return folder


def _st_folder(
    bert: Path, out: Path, pooling: str, head: tuple[str, ...] = (), left_pad: bool = False
) -> Path:
    """A folder written by sentence-transformers itself: Transformer → Pooling → head."""
    from sentence_transformers import SentenceTransformer, models

    torch.manual_seed(0)
    transformer = models.Transformer(str(bert), max_seq_length=16)
    if left_pad:
        transformer.tokenizer.padding_side = "left"
    modules: list[torch.nn.Module] = [transformer, models.Pooling(32, pooling_mode=pooling)]
    for kind in head:
        if kind == "dense":
            modules.append(models.Dense(32, 16))  # tanh
        elif kind == "residual":
            modules.append(models.Dense(16, 16, activation_function=None, use_residual=True))
        else:
            modules.append(models.Normalize())
    SentenceTransformer(modules=modules, device="cpu").save(str(out))
    return out


def _assert_same_vectors(folder: Path, texts: list[str] = TEXTS) -> TermEncoder:
    from sentence_transformers import SentenceTransformer

    ours = TermEncoder.load(folder, device="cpu")
    theirs = SentenceTransformer(str(folder), device="cpu").encode(
        texts, convert_to_numpy=True, normalize_embeddings=True
    )
    vectors = ours.encode(texts)
    assert vectors.shape == theirs.shape
    cosines = (vectors * theirs).sum(axis=1)
    assert cosines.min() > 0.9999, cosines
    return ours


@pytest.mark.parametrize("mode", [p.value for p in Pooling])
def test_each_pooling_mode_matches_sentence_transformers(
    mode: str, bert: Path, tmp_path: Path
) -> None:
    folder = _st_folder(bert, tmp_path / "st", mode)
    encoder = _assert_same_vectors(folder)
    assert encoder.pooling is Pooling(mode)
    assert encoder.max_length == 16  # sentence-transformers' truncation length, below 32


@pytest.mark.parametrize("mode", ["cls", "weightedmean", "lasttoken"])
def test_position_dependent_poolings_with_left_padding(
    mode: str, bert: Path, tmp_path: Path
) -> None:
    _assert_same_vectors(_st_folder(bert, tmp_path / "st", mode, left_pad=True))


def test_dense_layers_and_normalize_are_applied(bert: Path, tmp_path: Path) -> None:
    folder = _st_folder(bert, tmp_path / "st", "max", ("dense", "residual", "normalize"))
    encoder = _assert_same_vectors(folder)
    assert encoder.dimension == 16 and len(encoder.head) == 2  # final Normalize implied
    assert encoder.embed(["mi"]).shape == (1, 16)
    # saved by termnorm, the folder still runs the same way under sentence-transformers
    saved = encoder.save(tmp_path / "saved")
    np.testing.assert_allclose(_assert_same_vectors(saved).encode(TEXTS), encoder.encode(TEXTS))


def test_a_normalize_between_modules_is_run(bert: Path, tmp_path: Path) -> None:
    folder = _st_folder(bert, tmp_path / "st", "mean", ("normalize", "dense"))
    assert len(_assert_same_vectors(folder).head) == 2


def test_do_lower_case_lowers_the_input(tiny_bert_path: Path, tmp_path: Path) -> None:
    bert = _bert(tiny_bert_path, tmp_path / "cased", lowercase=False)  # "A" is [UNK]
    folder = _st_folder(bert, tmp_path / "st", "mean")
    config = folder / "sentence_bert_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "do_lower_case": True}))
    lowered = _assert_same_vectors(folder, ["Asthma", "HEART attack"])
    assert read_model_folder(folder).do_lower_case
    plain = TermEncoder.load(bert, device="cpu")
    assert not np.allclose(lowered.encode(["Asthma"]), plain.encode(["Asthma"]))
    # termnorm's saved folder keeps lower-casing for sentence-transformers too
    _assert_same_vectors(lowered.save(tmp_path / "saved"), ["Asthma", "HEART attack"])


def test_a_default_prompt_is_put_before_every_text(bert: Path, tmp_path: Path) -> None:
    """sentence-transformers applies the folder's default prompt and pools its tokens; so does
    termnorm, in encode and embed, and a saved folder keeps it (and a new identity)."""
    folder = _st_folder(bert, tmp_path / "st", "mean")
    plain = TermEncoder.load(folder, device="cpu")
    before = plain.fingerprint
    (folder / "config_sentence_transformers.json").write_text(json.dumps(prompt_config("query: ")))
    prompted = _assert_same_vectors(folder)
    assert prompted.prompt == "query: " and read_model_folder(folder).prompt == "query: "
    np.testing.assert_allclose(prompted.encode(["mi"]), plain.encode(["query: mi"]), atol=1e-6)
    embedded = torch.nn.functional.normalize(prompted.embed(["mi"]), dim=-1).detach().numpy()
    np.testing.assert_allclose(embedded, plain.encode(["query: mi"]), atol=1e-5)
    assert prompted.fingerprint != before
    saved = prompted.save(tmp_path / "saved")
    assert TermEncoder.load(saved, device="cpu").prompt == "query: "
    _assert_same_vectors(saved)


def test_a_plain_hf_folder_keeps_working(tiny_bert_path: Path) -> None:
    encoder = TermEncoder.load(tiny_bert_path, device="cpu")
    assert encoder.pooling is Pooling.MEAN and encoder.max_length == DEFAULT_MAX_LENGTH
    assert TermEncoder.load(tiny_bert_path, pooling="max", device="cpu").pooling is Pooling.MAX


def test_max_seq_length_bounds_the_default_length(tiny_bert_path: Path, tmp_path: Path) -> None:
    encoder = TermEncoder.load(tiny_bert_path, device="cpu")
    short = encoder.save(tmp_path / "short", max_seq_length=12)
    long = encoder.save(tmp_path / "long", max_seq_length=256)
    assert read_model_folder(short).max_seq_length == 12
    assert TermEncoder.load(short, device="cpu").max_length == 12
    assert TermEncoder.load(long, device="cpu").max_length == DEFAULT_MAX_LENGTH
    assert TermEncoder.load(long, max_length=48, device="cpu").max_length == 48


def test_an_explicit_pooling_overrides_the_folder(tiny_bert_path: Path, tmp_path: Path) -> None:
    folder = _st_folder(tiny_bert_path, tmp_path / "st", "max")
    assert TermEncoder.load(folder, device="cpu").pooling is Pooling.MAX
    assert TermEncoder.load(folder, pooling="cls", device="cpu").pooling is Pooling.CLS


def _termnorm_folder(tmp_path: Path) -> Path:
    """A termnorm-written folder (Transformer → Pooling → Normalize) to break in tests."""
    folder = tmp_path / "model"
    build_tiny_bert(tmp_path / "bert")
    TermEncoder.load(tmp_path / "bert", device="cpu").save(folder)
    return folder


def _edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


def _add_module(kind: str) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    def add(modules: list[dict[str, Any]]) -> list[dict[str, Any]]:
        entry = {"idx": 3, "name": "3", "path": "3_X", "type": kind}
        return [*modules[:2], entry, *modules[2:]]

    return add


BROKEN: dict[str, tuple[str, Callable[[Any], Any], str]] = {
    "layer norm": (
        "modules.json",
        _add_module("sentence_transformers.models.LayerNorm"),
        r"lists module 'sentence_transformers.models.LayerNorm' \(3_X\).*"
        r"Transformer → Pooling → Dense/Normalize folders only",
    ),
    "custom module": (
        "modules.json",
        _add_module("my_package.Reranker"),
        r"lists module 'my_package.Reranker'.*encode with sentence-transformers itself",
    ),
    "no pooling": ("modules.json", lambda m: m[:1], "no Pooling module after its Transformer"),
    "static embedding first": (
        "modules.json",
        lambda m: [{**m[0], "type": "sentence_transformers.models.StaticEmbedding"}, *m[1:]],
        "StaticEmbedding",
    ),
    "two pooling modes": (
        "1_Pooling/config.json",
        lambda c: {**c, "pooling_mode_max_tokens": True},
        r"pooling modes = \['max', 'mean'\]: sentence-transformers concatenates",
    ),
    "unknown pooling mode": (
        "1_Pooling/config.json",
        lambda c: {"pooling_mode": "median"},
        "pooling_mode = 'median': known modes: cls, mean",
    ),
    "loading arguments": (
        "sentence_bert_config.json",
        lambda c: {**c, "model_args": {"torch_dtype": "float16", "trust_remote_code": True}},
        r"model_args = \{'torch_dtype': 'float16'\}: termnorm loads the transformer",
    ),
    "a generative transformer": (
        "sentence_bert_config.json",
        lambda c: {**c, "transformer_task": "text-generation"},
        "transformer_task = 'text-generation'",
    ),
    "an undefined default prompt": (
        "config_sentence_transformers.json",
        lambda c: {"prompts": {"query": "query: "}, "default_prompt_name": "passage"},
        r"default_prompt_name = 'passage': it names no prompt of 'prompts' \(\['query'\]\)",
    ),
    "a prompt left out of the pooling": (
        "1_Pooling/config.json",
        lambda c: {**c, "include_prompt": False},
        "include_prompt = False: termnorm pools the default prompt's tokens",
    ),
    "a cross-encoder": (
        "config_sentence_transformers.json",
        lambda c: {"model_type": "CrossEncoder"},
        "model_type = 'CrossEncoder'",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_folders_termnorm_cannot_run_are_refused(case: str, tmp_path: Path) -> None:
    folder = _termnorm_folder(tmp_path)
    name, change, message = BROKEN[case]
    if case == "a prompt left out of the pooling":
        (folder / "config_sentence_transformers.json").write_text(
            json.dumps(prompt_config("query: "))
        )
    path = folder / name
    if not path.exists():
        path.write_text("{}")
    _edit_json(path, change)
    with pytest.raises(ArtifactMismatchError, match=message):
        TermEncoder.load(folder, device="cpu")


def test_a_dense_with_a_foreign_activation_is_refused(tiny_bert_path: Path, tmp_path: Path) -> None:
    folder = _st_folder(tiny_bert_path, tmp_path / "st", "mean", ("dense",))
    _edit_json(
        folder / "2_Dense" / "config.json",
        lambda c: {**c, "activation_function": "my_package.Swish"},
    )
    with pytest.raises(
        ArtifactMismatchError, match=r"'my_package\.Swish', which is not a torch\.nn"
    ):
        TermEncoder.load(folder, device="cpu")


def test_a_folder_without_a_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArtifactMismatchError, match="is not a model folder"):
        TermEncoder.load(tmp_path)


@pytest.mark.slow
def test_minilm_matches_sentence_transformers() -> None:
    """The default model, on terms shorter than 32 tokens (termnorm's length; MiniLM's is 256)."""
    from sentence_transformers import SentenceTransformer

    from termnorm.encoders import default_model_path

    texts = [t for t in TEXTS if len(t) < 60] + ["Acute myocardial infarction", "HbA1c"]
    ours = TermEncoder.load(device="cpu").encode(texts)
    theirs = SentenceTransformer(str(default_model_path()), device="cpu").encode(
        texts, convert_to_numpy=True, normalize_embeddings=True
    )
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
