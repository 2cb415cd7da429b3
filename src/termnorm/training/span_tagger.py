"""Train the span tagger: BIO tags over word pieces, a linear head on a transformer.

:func:`train_span_tagger` fine-tunes a :class:`~termnorm.encoders.token_tagger.TokenTagger`
on labelled chunks of the training documents
(:func:`~termnorm.training.tagger_data.tagged_chunks`) with AdamW (encoder and head at their
own rates, biases and LayerNorm not decayed), a linear warm-up then decay, the token
cross-entropy, chunks shuffled each epoch by the seed. After each epoch the dev documents,
when there are any, are tagged by the ``predict`` the caller gives (the faces pass
:func:`termnorm.annotate.tagger.predict_spans`: inference lives in ``annotate/``, above this
room) and scored by exact-span F1 (:func:`span_scores`); the best
epoch's weights are kept and training stops after ``patience`` epochs without a better F1.
Without dev documents every epoch runs and the last weights are kept. ``max_minutes`` ends
training early, after the step that passes it (the last epoch then counts the chunks seen).

:func:`train_tagger_from_files` is what ``termnorm ner train`` runs: read the corpora, hold
out ``dev_fraction`` of the training documents unless dev corpora are given, train, and
write the folder (:func:`~termnorm.encoders.token_tagger.save_tagger`) with its card.
:func:`train_tagger_from_kg` is ``termnorm ner train --kg``: the same from unlabeled texts
and a KG's names, no annotated corpus needed.
"""

from __future__ import annotations

import copy
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm.auto import tqdm

from termnorm._artifacts import file_sha256, prepare_output
from termnorm.encoders.bio import IGNORE, LABELS
from termnorm.encoders.fingerprint import model_fingerprint
from termnorm.encoders.forward import torch_threads
from termnorm.encoders.token_tagger import TokenTagger, save_tagger
from termnorm.encoders.transformer import default_model_path
from termnorm.mentions import MentionFormat, read_documents
from termnorm.training.optim import build_scheduler
from termnorm.training.tagger_config import TaggerTrainConfig
from termnorm.training.tagger_data import (
    TaggedChunk,
    TaggedDocument,
    distant_documents,
    holdout_split,
    read_tagged_documents,
    replaced_copies,
    tagged_chunks,
)
from termnorm.training.tagger_model import TaggerBase, load_base

__all__ = [
    "SpanPredictor",
    "TaggerTrainResult",
    "span_scores",
    "train_span_tagger",
    "train_tagger_from_files",
    "train_tagger_from_kg",
]

SpanPredictor = Callable[[TokenTagger, Any, Sequence[str], int, int], list[list[tuple[int, int]]]]
"""``predict(model, tokenizer, texts, max_length, stride)``: each text's spans (sorted)."""

logger = logging.getLogger(__name__)


@dataclass
class TaggerTrainResult:
    """A trained tagger (best weights loaded) and how its training went."""

    model: TokenTagger
    base: TaggerBase
    max_length: int
    epochs_run: int
    best_epoch: int
    losses: list[float]
    dev: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    chunks_seen: int = 0

    @property
    def best_dev(self) -> dict[str, float]:
        """The dev span scores of the kept epoch (empty without dev documents)."""
        return self.dev[self.best_epoch - 1] if self.dev else {}


def span_scores(
    gold: Sequence[Sequence[tuple[int, int]]], found: Sequence[Sequence[tuple[int, int]]]
) -> dict[str, float]:
    """Exact-span precision, recall and F1, micro-averaged over documents (0 on 0/0)."""
    tp = fp = fn = 0
    for g, f in zip(gold, found, strict=True):
        g_set, f_set = set(g), set(f)
        tp += len(g_set & f_set)
        fp += len(f_set - g_set)
        fn += len(g_set - f_set)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def train_span_tagger(
    train: Sequence[TaggedDocument],
    dev: Sequence[TaggedDocument] = (),
    config: TaggerTrainConfig | None = None,
    model_path: str | Path | None = None,
    progress: bool = True,
    *,
    predict: SpanPredictor,
) -> TaggerTrainResult:
    """Fine-tune a tagger on ``train`` (module doc); ``model_path``: the base model folder
    (default all-MiniLM-L6-v2); ``predict`` tags the dev documents after each epoch. Seeded: the same inputs and seed give the same weights on
    one machine and thread count."""
    config = config or TaggerTrainConfig()
    if not train:
        raise ValueError("no training document")
    started = time.monotonic()
    with torch_threads(config.threads):
        torch.manual_seed(config.seed)
        base = load_base(model_path if model_path is not None else default_model_path())
        max_length = min(config.max_length, base.max_length)
        model = TokenTagger(base.model, LABELS, config.dropout)
        chunks = tagged_chunks(train, base.tokenizer, max_length, config.stride)
        logger.info(
            "%d training documents, %d chunks of <= %d word pieces",
            len(train),
            len(chunks),
            max_length,
        )
        result = _fit(model, base, chunks, dev, config, max_length, progress, predict)
    result.seconds = time.monotonic() - started
    return result


def _fit(
    model: TokenTagger,
    base: TaggerBase,
    chunks: list[TaggedChunk],
    dev: Sequence[TaggedDocument],
    config: TaggerTrainConfig,
    max_length: int,
    progress: bool,
    predict: SpanPredictor,
) -> TaggerTrainResult:
    steps_per_epoch = -(-len(chunks) // config.batch_size)
    optimizer = _optimizer(model, config)
    total = steps_per_epoch * config.epochs
    scheduler = build_scheduler(optimizer, int(config.warmup * total), total)
    loss_fn = nn.CrossEntropyLoss(ignore_index=IGNORE)
    order = random.Random(config.seed)
    pad = int(base.tokenizer.pad_token_id or 0)
    result = TaggerTrainResult(model, base, max_length, 0, 0, [])
    best_f1, best_state, waited = -1.0, None, 0
    seen = 0
    deadline = None if config.max_minutes is None else time.monotonic() + 60 * config.max_minutes
    for epoch in range(1, config.epochs + 1):
        model.train()
        shuffled = list(chunks)
        order.shuffle(shuffled)
        bar = tqdm(
            total=len(shuffled), desc=f"ner epoch {epoch}", unit="chunk", disable=not progress
        )
        running = 0.0
        for first in range(0, len(shuffled), config.batch_size):
            ids, mask, labels = _batch(shuffled[first : first + config.batch_size], pad)
            logits = model(ids, mask)
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running += float(loss.detach()) * len(ids)
            bar.update(len(ids))
            bar.set_postfix(loss=f"{float(loss.detach()):.4f}")
            seen = first + len(ids)
            if deadline is not None and time.monotonic() > deadline:
                logger.info("budget of %g minutes spent after %d chunks", config.max_minutes, seen)
                break
        bar.close()
        result.losses.append(running / seen)
        result.chunks_seen += seen
        result.epochs_run = epoch
        logger.info("epoch %d: mean loss %.4f", epoch, result.losses[-1])
        out_of_time = deadline is not None and time.monotonic() > deadline
        if not dev:
            result.best_epoch = epoch
            if out_of_time:
                break
            continue
        found = predict(model, base.tokenizer, [d.text for d in dev], max_length, config.stride)
        scores = span_scores([d.spans for d in dev], found)
        result.dev.append(scores)
        logger.info(
            "epoch %d: dev span F1 %.4f (P %.4f, R %.4f)",
            epoch,
            scores["f1"],
            scores["precision"],
            scores["recall"],
        )
        if scores["f1"] > best_f1:
            best_f1, best_state, waited = scores["f1"], copy.deepcopy(model.state_dict()), 0
            result.best_epoch = epoch
        else:
            waited += 1
            if waited >= config.patience:
                logger.info("no better dev span F1 for %d epochs: stopping", waited)
                break
        if out_of_time:
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return result


def _optimizer(model: TokenTagger, config: TaggerTrainConfig) -> torch.optim.AdamW:
    """AdamW: encoder weights decayed, biases and norms not, the head at its own rate."""
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for name, p in model.encoder.named_parameters():
        (no_decay if p.ndim < 2 or "LayerNorm" in name or "norm" in name else decay).append(p)
    groups: list[dict[str, Any]] = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
        {
            "params": list(model.classifier.parameters()),
            "weight_decay": 0.0,
            "lr": config.head_learning_rate,
        },
    ]
    return torch.optim.AdamW(groups, lr=config.learning_rate)


def _batch(
    chunks: Sequence[TaggedChunk], pad: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Padded ``input_ids``, ``attention_mask`` and ``labels`` (``IGNORE`` on padding)."""
    width = max(len(c.input_ids) for c in chunks)
    ids = torch.full((len(chunks), width), pad, dtype=torch.long)
    mask = torch.zeros((len(chunks), width), dtype=torch.long)
    labels = torch.full((len(chunks), width), IGNORE, dtype=torch.long)
    for i, chunk in enumerate(chunks):
        n = len(chunk.input_ids)
        ids[i, :n] = torch.tensor(chunk.input_ids)
        mask[i, :n] = 1
        labels[i, :n] = torch.tensor(chunk.labels)
    return ids, mask, labels


def train_tagger_from_files(
    mentions: Sequence[str | Path],
    out: str | Path,
    format: MentionFormat | str | None = None,
    dev: Sequence[str | Path] = (),
    config: TaggerTrainConfig | None = None,
    model_path: str | Path | None = None,
    overwrite: bool = False,
    progress: bool = True,
    *,
    predict: SpanPredictor,
) -> tuple[Path, TaggerTrainResult]:
    """Read the corpora, train (module doc) and write the tagger folder ``out``; the folder
    and the result. ``out`` is checked before any work (never an input, never a non-empty
    folder without ``overwrite``)."""
    config = config or TaggerTrainConfig()
    target = prepare_output(out, overwrite, {"--mentions": mentions, "--dev": dev}, kind="ner")
    documents = read_tagged_documents(mentions, format)
    if dev:
        train, held = documents, read_tagged_documents(dev, format)
    else:
        train, held = holdout_split(documents, config.dev_fraction, config.seed)
    corpora = [_corpus(p, format, "train") for p in mentions]
    corpora += [_corpus(p, format, "dev") for p in dev]
    source = "files" if dev else f"held out {config.dev_fraction:g} of train"
    return _train_and_save(
        train, held, target, config, model_path, progress, predict, corpora, source
    )


def train_tagger_from_kg(
    names: Sequence[str],
    texts: Sequence[str | Path],
    out: str | Path,
    label: Callable[[str], Sequence[tuple[int, int]]],
    format: MentionFormat | str | None = None,
    config: TaggerTrainConfig | None = None,
    model_path: str | Path | None = None,
    overwrite: bool = False,
    progress: bool = True,
    *,
    predict: SpanPredictor,
    kg: dict[str, Any] | None = None,
) -> tuple[Path, TaggerTrainResult]:
    """Train a tagger with no annotated corpus (``termnorm ner train --kg``): the document
    texts of ``texts`` (any annotations in them unread) labelled by ``label`` (the faces pass
    the dictionary detector over the KG's names), ``dev_fraction`` of them held out as they
    are, and the rest trained on with ``config.kg_copies`` copies whose spans are replaced by
    the KG's ``names`` (:mod:`~termnorm.training.tagger_data`); the folder and the result.
    ``kg`` describes the KG on the card."""
    config = config or TaggerTrainConfig()
    target = prepare_output(out, overwrite, {"--text": texts}, kind="ner")
    documents: dict[str, str] = {}
    for number, path in enumerate(texts):
        for doc_id, text in read_documents(path, format).items():
            documents[doc_id if doc_id not in documents else f"{number}:{doc_id}"] = text
    labelled = distant_documents(documents, label)
    train, held = holdout_split(labelled, config.dev_fraction, config.seed)
    train += replaced_copies(train, names, config.kg_copies, config.seed)
    corpora = [_corpus(p, format, "text") for p in texts]
    corpora.append({"role": "names", **(kg or {}), "names": len(set(names))})
    source = f"held out {config.dev_fraction:g} of the texts, labelled by the KG's names"
    return _train_and_save(
        train, held, target, config, model_path, progress, predict, corpora, source
    )


def _train_and_save(
    train: list[TaggedDocument],
    held: list[TaggedDocument],
    target: Path,
    config: TaggerTrainConfig,
    model_path: str | Path | None,
    progress: bool,
    predict: SpanPredictor,
    corpora: list[dict[str, Any]],
    dev_source: str,
) -> tuple[Path, TaggerTrainResult]:
    """Train on ``train`` (early stopping on ``held``) and write the folder and its card."""
    base_path = Path(model_path) if model_path is not None else default_model_path()
    result = train_span_tagger(train, held, config, base_path, progress, predict=predict)
    card = {
        "max_length": result.max_length,
        "stride": config.stride,
        "base_model": {"path": str(base_path), "fingerprint": model_fingerprint(base_path)},
        "corpora": corpora,
        "documents": {"train": len(train), "dev": len(held), "dev_source": dev_source},
        "mentions": {
            "train": sum(len(d.spans) for d in train),
            "dev": sum(len(d.spans) for d in held),
        },
        "training": config.to_dict(),
        "epochs_run": result.epochs_run,
        "chunks_seen": result.chunks_seen,
        "best_epoch": result.best_epoch,
        "losses": result.losses,
        "dev_span": result.best_dev,
        "dev_span_per_epoch": result.dev,
        "train_minutes": round(result.seconds / 60, 2),
    }
    save_tagger(result.model, result.base.tokenizer, card, target)
    return target, result


def _corpus(path: str | Path, format: MentionFormat | str | None, role: str) -> dict[str, Any]:
    """A corpus's entry on the card: its path, format, role and the SHA-256 of its files."""
    from termnorm.mentions import detect_format, parse_format

    p = Path(path)
    files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    fmt = detect_format(p) if format is None else parse_format(format)
    return {"path": str(p), "format": fmt.value, "role": role, "fingerprint": file_sha256(*files)}
