"""Model folders: what a Hugging Face or sentence-transformers folder asks to be run.

A **sentence-transformers folder** lists its modules in ``modules.json``. termnorm runs the
chain ``Transformer → Pooling → (Dense | Normalize)*`` as sentence-transformers does:

- ``Transformer`` (the folder itself or a sub-folder): ``config.json``, weights, tokenizer; its
  ``sentence_bert_config.json`` gives ``max_seq_length`` and ``do_lower_case``;
- ``Pooling``: one mode from its ``config.json`` (``pooling_mode``, or the older
  ``pooling_mode_*_tokens`` flags), see :mod:`termnorm.encoders.pooling`;
- ``Dense``: ``act(W x + b)`` (+ a residual), a ``torch.nn`` activation;
- ``Normalize``: L2 normalisation. termnorm's vectors are always L2-normalised, so a final
  ``Normalize`` is implied and dropped from :attr:`ModelFolder.head`.

Everything else is refused with an :class:`~termnorm.errors.ArtifactMismatchError` that names
the module: other modules (LSTM, CNN, WordEmbeddings, StaticEmbedding, Router, LayerNorm,
Dropout, ...), several pooling modes at once (concatenated by sentence-transformers),
transformer loading arguments, a model that is not a SentenceTransformer.

A **default prompt** (``default_prompt_name`` in ``config_sentence_transformers.json``, e.g.
multilingual-e5's ``"query: "``) is the folder's: :attr:`ModelFolder.prompt`, put before every
text the encoder encodes (index builds, queries and training alike), never chosen by a
caller; its Pooling must then include the prompt's tokens (``include_prompt``, the default).

A **plain Hugging Face folder** (no ``modules.json``) is a Transformer alone; the caller's
pooling applies, mean when none is given.

Reading a folder only reads JSON; weights are loaded by :mod:`termnorm.encoders.transformer`
and :mod:`termnorm.encoders.dense`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termnorm.encoders.pooling import Pooling
from termnorm.errors import ArtifactMismatchError

__all__ = [
    "DenseSpec",
    "ModelFolder",
    "NormalizeSpec",
    "folder_pooling",
    "prompt_config",
    "read_model_folder",
    "resolve_pooling",
]

logger = logging.getLogger(__name__)

MODULES_FILE = "modules.json"
ST_CONFIG_FILE = "config_sentence_transformers.json"
# sentence-transformers reads the first of these in the Transformer's folder
TRANSFORMER_CONFIG_FILES = (
    "sentence_bert_config.json",
    "sentence_roberta_config.json",
    "sentence_distilbert_config.json",
    "sentence_camembert_config.json",
    "sentence_albert_config.json",
    "sentence_xlm-roberta_config.json",
    "sentence_xlnet_config.json",
)
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
)
# (weights file, its shard index), in the order transformers prefers them
WEIGHT_FILES = (
    ("model.safetensors", "model.safetensors.index.json"),
    ("pytorch_model.bin", "pytorch_model.bin.index.json"),
)
DENSE_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
TANH = "torch.nn.modules.activation.Tanh"  # sentence-transformers' Dense default

_SUPPORTED = "Transformer → Pooling → Dense/Normalize"
_LEGACY_POOLING = {  # sentence-transformers' order, used when several flags are set
    "pooling_mode_cls_token": Pooling.CLS,
    "pooling_mode_max_tokens": Pooling.MAX,
    "pooling_mode_mean_tokens": Pooling.MEAN,
    "pooling_mode_mean_sqrt_len_tokens": Pooling.MEAN_SQRT_LEN,
    "pooling_mode_weightedmean_tokens": Pooling.WEIGHTED_MEAN,
    "pooling_mode_lasttoken": Pooling.LAST_TOKEN,
}
_POOLING_KEYS = {
    "word_embedding_dimension",
    "embedding_dimension",
    "pooling_mode",
    "include_prompt",  # checked against the folder's prompt (see _check_prompt_pooling)
    *_LEGACY_POOLING,
}
_UNSET = object()
_TEXT_TRANSFORMER = {  # sentence-transformers v6 keys, at the values of a text embedder
    "transformer_task": "feature-extraction",
    "modality_config": {"text": {"method": "forward", "method_output_name": "last_hidden_state"}},
    "module_output_name": "token_embeddings",
}
_LOADING_ARGS = (
    "model_args",
    "tokenizer_args",
    "config_args",
    "model_kwargs",
    "processor_kwargs",
    "config_kwargs",
    "processing_kwargs",
)
_DENSE_KEYS = {
    "in_features",
    "out_features",
    "bias",
    "activation_function",
    "module_input_name",
    "module_output_name",
    "use_residual",
}
_SENTENCE = "sentence_embedding"


@dataclass(frozen=True)
class DenseSpec:
    """A ``Dense`` module: ``act(W x + b)``, plus ``x`` (or ``R x``) when ``use_residual``."""

    path: Path  # the module's folder (config.json + weights)
    in_features: int
    out_features: int
    bias: bool
    activation: str | None  # dotted torch.nn class; None = identity
    use_residual: bool

    @property
    def weights(self) -> Path:
        """The weights file (``model.safetensors`` preferred to ``pytorch_model.bin``)."""
        for name in DENSE_WEIGHT_FILES:
            if (self.path / name).is_file():
                return self.path / name
        raise ArtifactMismatchError(
            f"the Dense module {self.path} has no weights ({' or '.join(DENSE_WEIGHT_FILES)})"
        )

    def config(self) -> dict[str, Any]:
        """The module's ``config.json`` as sentence-transformers writes it."""
        return {
            "in_features": self.in_features,
            "out_features": self.out_features,
            "bias": self.bias,
            "activation_function": self.activation or "torch.nn.modules.linear.Identity",
            **({"use_residual": True} if self.use_residual else {}),
        }


@dataclass(frozen=True)
class NormalizeSpec:
    """A ``Normalize`` module followed by more modules (a final one is implied)."""

    path: Path


@dataclass(frozen=True)
class ModelFolder:
    """What a model folder asks to run (see module doc).

    ``pooling`` is ``None`` for a plain Hugging Face folder; ``head`` lists the modules after
    pooling, without a final ``Normalize``; ``max_seq_length`` is the Transformer's declared
    truncation length (``None``: not declared).
    """

    root: Path
    transformer: Path
    pooling: Pooling | None
    pooling_config: Path | None
    head: tuple[DenseSpec | NormalizeSpec, ...]
    max_seq_length: int | None
    do_lower_case: bool
    prompt: str = ""

    def identity_files(self) -> list[Path]:
        """Every file whose bytes decide the vectors, sorted: weights, configs, tokenizer."""
        t = self.transformer
        files = [t / "config.json", *_weights(t), *(t / n for n in TOKENIZER_FILES)]
        files += [self.root / MODULES_FILE, *(t / n for n in TRANSFORMER_CONFIG_FILES)]
        if self.pooling_config is not None:
            files.append(self.pooling_config)
        if self.prompt:  # only then: folders without a prompt keep their identity
            files.append(self.root / ST_CONFIG_FILE)
        for module in self.head:
            files.append(module.path / "config.json")
            if isinstance(module, DenseSpec):
                files.append(module.weights)
        return sorted({f for f in files if f.is_file()})


def read_model_folder(path: str | Path) -> ModelFolder:
    """Read a model folder's module list (JSON only).

    Raises:
        ArtifactMismatchError: not a model folder, or a module or setting termnorm does not
            run (the message names it and says what to do).
    """
    root = Path(path)
    if not (root / MODULES_FILE).is_file():
        _require_transformer(root, root)
        return ModelFolder(root, root, None, None, (), None, False)
    prompt = _default_prompt(root)
    entries = _modules(root)
    kinds = [_kind(e) for e in entries]
    for i, (entry, kind) in enumerate(zip(entries, kinds, strict=True)):
        expected = (
            ("Transformer",) if i == 0 else ("Pooling",) if i == 1 else ("Dense", "Normalize")
        )
        if kind not in expected:
            raise _unsupported(root, entry)
    if kinds[:2] != ["Transformer", "Pooling"]:
        raise ArtifactMismatchError(
            f"{root / MODULES_FILE} has no Pooling module after its Transformer: termnorm runs "
            f"{_SUPPORTED} folders only; add a Pooling module with sentence-transformers"
        )
    transformer = root / str(entries[0].get("path", ""))
    _require_transformer(root, transformer)
    max_seq_length, lower = _transformer_config(transformer)
    pooling_config = root / str(entries[1].get("path", "")) / "config.json"
    pooling = _pooling(pooling_config)
    _check_prompt_pooling(pooling_config, prompt)
    head: list[DenseSpec | NormalizeSpec] = []
    for entry, kind in zip(entries[2:], kinds[2:], strict=True):
        folder = root / str(entry.get("path", ""))
        head.append(_dense(folder) if kind == "Dense" else _normalize(folder))
    while head and isinstance(head[-1], NormalizeSpec):
        head.pop()  # implied: termnorm's vectors are L2-normalised
    return ModelFolder(
        root, transformer, pooling, pooling_config, tuple(head), max_seq_length, lower, prompt
    )


def prompt_config(prompt: str, **others: str) -> dict[str, object]:
    """``config_sentence_transformers.json`` whose default prompt is ``prompt`` (named
    ``query``; ``others``: more named prompts). sentence-transformers then applies it too, and
    pools its tokens (``include_prompt``, its default)."""
    return {
        "model_type": "SentenceTransformer",
        "prompts": {"query": prompt, **others},
        "default_prompt_name": "query",
        "similarity_fn_name": "cosine",
    }


def resolve_pooling(folder: ModelFolder, pooling: Pooling | str | None) -> Pooling:
    """The caller's pooling when given, else the folder's, else mean."""
    if pooling is not None:
        return Pooling(pooling)
    return folder.pooling or Pooling.MEAN


def folder_pooling(path: str | Path) -> Pooling | None:
    """Pooling declared by a sentence-transformers folder; ``None`` for a plain HF folder."""
    return read_model_folder(path).pooling


# ------------------------------------------------------------------ module list
def _modules(root: Path) -> list[dict[str, Any]]:
    entries = _read_json(root / MODULES_FILE)
    if not isinstance(entries, list) or not entries:
        raise ArtifactMismatchError(f"{root / MODULES_FILE} lists no module")
    return entries


def _kind(entry: dict[str, Any]) -> str:
    """``Transformer`` for ``sentence_transformers.models.Transformer`` or its v6 path."""
    kind = str(entry.get("type", ""))
    return kind.rsplit(".", 1)[-1] if kind.startswith("sentence_transformers.") else kind


def _unsupported(root: Path, entry: dict[str, Any]) -> ArtifactMismatchError:
    where = entry.get("path") or "the folder itself"
    return ArtifactMismatchError(
        f"{root / MODULES_FILE} lists module {entry.get('type')!r} ({where}) there, which "
        f"termnorm does not run: it runs {_SUPPORTED} folders only. Use a model folder of "
        "that shape, or encode with sentence-transformers itself"
    )


def _require_transformer(root: Path, folder: Path) -> None:
    if not (folder / "config.json").is_file():
        raise ArtifactMismatchError(
            f"{root} is not a model folder (no {folder / 'config.json'}); pass a Hugging Face "
            "or sentence-transformers folder, e.g. one written by 'termnorm train'"
        )


def _weights(folder: Path) -> list[Path]:
    """The transformer weight files transformers loads (a sharded checkpoint: all shards)."""
    for single, index in WEIGHT_FILES:
        if (folder / single).is_file():
            return [folder / single]
        if (folder / index).is_file():
            shards = sorted(set(_read_json(folder / index).get("weight_map", {}).values()))
            return [folder / index, *(folder / s for s in shards)]
    raise ArtifactMismatchError(
        f"{folder} has no weights (model.safetensors or pytorch_model.bin, or their shards)"
    )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ArtifactMismatchError(f"{path} is not valid JSON ({exc})") from None


def _read_config(path: Path) -> dict[str, Any]:
    """A module's ``config.json``; ``{}`` when the module has none."""
    if not path.is_file():
        return {}
    config = _read_json(path)
    if not isinstance(config, dict):
        raise ArtifactMismatchError(f"{path} is not a JSON object")
    return config


def _refuse(path: Path, key: str, value: Any, why: str) -> ArtifactMismatchError:
    return ArtifactMismatchError(f"{path} sets {key} = {value!r}: {why}")


# ------------------------------------------------------------------ module configs
def _default_prompt(root: Path) -> str:
    """The folder's default prompt (``""``: none); refuse models that are not plain
    SentenceTransformers or name a prompt they do not define."""
    path = root / ST_CONFIG_FILE
    config = _read_config(path)
    model_type = config.get("model_type")
    if model_type not in (None, "SentenceTransformer"):
        raise _refuse(path, "model_type", model_type, "termnorm runs SentenceTransformer models")
    similarity = config.get("similarity_fn_name")
    if similarity not in (None, "cosine"):
        logger.warning(
            "%s declares similarity %r; termnorm compares L2-normalised vectors (cosine)",
            root,
            similarity,
        )
    name = config.get("default_prompt_name")
    if name is None:
        return ""
    prompts = config.get("prompts") or {}
    prompt = prompts.get(name) if isinstance(prompts, dict) else None
    if not isinstance(prompt, str):
        raise _refuse(
            path,
            "default_prompt_name",
            name,
            f"it names no prompt of 'prompts' ({sorted(prompts) if isinstance(prompts, dict) else prompts}); "
            "add it there, or set default_prompt_name to null",
        )
    return prompt


def _check_prompt_pooling(path: Path, prompt: str) -> None:
    """A prompt's tokens are pooled with the text's: refuse ``include_prompt: false``."""
    if prompt and _read_config(path).get("include_prompt", True) is False:
        raise _refuse(
            path,
            "include_prompt",
            False,
            "termnorm pools the default prompt's tokens with the text's; set include_prompt "
            "to true, or drop the default prompt",
        )


def _transformer_config(folder: Path) -> tuple[int | None, bool]:
    """``(max_seq_length, do_lower_case)`` of the Transformer module's config file."""
    path = next((folder / n for n in TRANSFORMER_CONFIG_FILES if (folder / n).is_file()), None)
    if path is None:
        return None, False
    config = _read_config(path)
    for key, value in config.items():
        if key in ("max_seq_length", "do_lower_case", "unpad_inputs"):
            continue  # unpad_inputs: a flash-attention memory layout, same numbers
        if key in _LOADING_ARGS:
            extra = {k: v for k, v in (value or {}).items() if k != "trust_remote_code"}
            if extra:  # sentence-transformers drops trust_remote_code itself
                raise _refuse(
                    path,
                    key,
                    extra,
                    "termnorm loads the transformer with default arguments; save the model "
                    "without them (or with the arguments applied) to use it here",
                )
        elif _TEXT_TRANSFORMER.get(key, _UNSET) == value:
            continue
        else:
            raise _refuse(
                path, key, value, "termnorm runs text transformers that output token embeddings"
            )
    length = config.get("max_seq_length")
    return (int(length) if length is not None else None), bool(config.get("do_lower_case"))


def _pooling(path: Path) -> Pooling:
    """The one pooling mode of a Pooling module's config."""
    config = _read_config(path)
    unknown = sorted(set(config) - _POOLING_KEYS)
    if unknown:
        raise _refuse(path, unknown[0], config[unknown[0]], "not a Pooling setting termnorm knows")
    mode = config.get("pooling_mode")
    if mode is not None:
        modes = [mode] if isinstance(mode, str) else list(mode)
    else:  # older flags; none set means mean, as in sentence-transformers
        modes = [m.value for key, m in _LEGACY_POOLING.items() if config.get(key)] or ["mean"]
    if len(modes) != 1:
        raise _refuse(
            path,
            "pooling modes",
            modes,
            "sentence-transformers concatenates several modes; termnorm takes one "
            f"({', '.join(p.value for p in Pooling)})",
        )
    try:
        return Pooling(modes[0])
    except ValueError:
        known = ", ".join(p.value for p in Pooling)
        raise _refuse(path, "pooling_mode", modes[0], f"known modes: {known}") from None


def _dense(folder: Path) -> DenseSpec:
    path = folder / "config.json"
    config = _read_config(path)
    unknown = sorted(set(config) - _DENSE_KEYS)
    if unknown:
        raise _refuse(path, unknown[0], config[unknown[0]], "not a Dense setting termnorm knows")
    for key in ("module_input_name", "module_output_name"):
        if config.get(key, _SENTENCE) != _SENTENCE:
            raise _refuse(path, key, config[key], f"termnorm's Dense maps the {_SENTENCE}")
    if "in_features" not in config or "out_features" not in config:
        raise ArtifactMismatchError(f"{path} lacks in_features/out_features")
    return DenseSpec(
        folder,
        int(config["in_features"]),
        int(config["out_features"]),
        bool(config.get("bias", True)),
        config.get("activation_function", TANH),
        bool(config.get("use_residual", False)),
    )


def _normalize(folder: Path) -> NormalizeSpec:
    path = folder / "config.json"
    config = _read_config(path)
    for key in ("module_input_name", "module_output_name"):
        if config.get(key, _SENTENCE) != _SENTENCE:
            raise _refuse(path, key, config[key], f"termnorm normalises the {_SENTENCE}")
    return NormalizeSpec(folder)
