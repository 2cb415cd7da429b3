"""Training a cross-encoder ranker on labelled (mention, candidate) pairs.

Loss ``listwise`` (the default; :class:`~termnorm.losses.ListwiseLoss`): the pairs of one query
(same ``group``) form a list, softmax over it, cross-entropy on its gold candidates; a batch
holds whole queries, at least ``batch_size`` pairs. Loss ``pointwise`` (Liang et al. 2021,
eq. 10, the paper's, kept as its ablation): binary cross-entropy between ``sigmoid(logit)``
of a pair and its label (1: the candidate is one of the mention's gold concepts, 0: it is
not), averaged over a batch of ``batch_size`` pairs. AdamW (lr 3e-5; paper: 2e-5) with weight decay on the transformer's matrices, the
head at ``head_lr``; linear warm-up over ``warmup`` of the steps, then linear decay to 0
(:func:`~termnorm.training.optim.build_scheduler`); gradients clipped at norm 1. Pairs are
shuffled each epoch by a generator seeded with ``seed + epoch``, so a run is reproducible.

Why not the :class:`~termnorm.training.Trainer`: its contract is an encoder that turns texts
into pooled vectors that an objective scores; a cross-encoder reads the two texts together,
with a per-pair attention mask, and has no text vector to hand over. The parts that carry
over — the schedule, the log format — are shared; the pairs themselves come from the search
layer (:mod:`termnorm.search.stages.ranker.training`), which recalls the candidates.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import torch
from torch import nn
from tqdm.auto import tqdm

from termnorm.losses.listwise import ListwiseLoss
from termnorm.search.stages.ranker.cross_encoder import KeywordCrossEncoder
from termnorm.search.stages.ranker.train_spec import LOSSES, RankerTrainConfig
from termnorm.training.optim import build_scheduler

__all__ = [
    "LOSSES",
    "RankPair",
    "RankerTrainConfig",
    "RankerTrainStats",
    "listwise_batches",
    "train_cross_encoder",
]


logger = logging.getLogger(__name__)


class RankPair(NamedTuple):
    """One training pair: the query text, the candidate's text, 1.0 (gold) or 0.0."""

    mention: str
    candidate: str
    label: float
    group: int = -1  # the query it belongs to (list-wise training); -1: none


@dataclass
class RankerTrainStats:
    """What a run did: pairs, positives, steps, mean loss per epoch, seconds."""

    pairs: int
    positives: int
    steps: int
    epoch_loss: list[float]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view."""
        return asdict(self)


def _optimizer(model: KeywordCrossEncoder, config: RankerTrainConfig) -> torch.optim.AdamW:
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for name, p in model.model.named_parameters():
        if p.requires_grad:
            (no_decay if p.ndim < 2 or "LayerNorm" in name else decay).append(p)
    groups: list[dict[str, Any]] = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
        {"params": list(model.head.parameters()), "weight_decay": 0.0, "lr": config.head_lr},
    ]
    return torch.optim.AdamW(groups, lr=config.lr)


def listwise_batches(
    pairs: Sequence[RankPair], batch_size: int, seed: int
) -> list[list[list[int]]]:
    """Batches of whole queries (lists of pair indices), the queries shuffled by ``seed``; a
    batch closes once it holds ``batch_size`` pairs. ``ValueError`` for a pair without group."""
    groups: dict[int, list[int]] = {}
    for i, p in enumerate(pairs):
        if p.group < 0:
            raise ValueError("list-wise training needs each pair's query (RankPair.group)")
        groups.setdefault(p.group, []).append(i)
    keys = list(groups)
    order = torch.randperm(len(keys), generator=torch.Generator().manual_seed(seed)).tolist()
    batches: list[list[list[int]]] = [[]]
    for j in order:
        if sum(len(g) for g in batches[-1]) >= batch_size:
            batches.append([])
        batches[-1].append(groups[keys[j]])
    return [b for b in batches if b]


def _listwise_loss(
    model: KeywordCrossEncoder, pairs: Sequence[RankPair], batch: list[list[int]]
) -> torch.Tensor:
    flat = [i for group in batch for i in group]
    tokens = model.tokenize([pairs[i].mention for i in flat], [pairs[i].candidate for i in flat])
    logits = model(tokens)  # [n]
    width = max(len(g) for g in batch)
    padded = logits.new_zeros((len(batch), width))
    gold = torch.zeros((len(batch), width), dtype=torch.bool, device=logits.device)
    mask = torch.zeros_like(gold)
    at = 0
    for q, group in enumerate(batch):
        padded[q, : len(group)] = logits[at : at + len(group)]
        gold[q, : len(group)] = torch.tensor([pairs[i].label > 0.5 for i in group])
        mask[q, : len(group)] = True
        at += len(group)
    loss: torch.Tensor = ListwiseLoss()(padded, gold, mask)
    return loss


def train_cross_encoder(
    model: KeywordCrossEncoder,
    pairs: Sequence[RankPair],
    config: RankerTrainConfig | None = None,
    show_progress: bool = False,
    on_step: Callable[[int, float], None] | None = None,
) -> RankerTrainStats:
    """Train ``model`` in place on ``pairs`` (module doc); ``on_step(step, loss)`` after each
    optimizer step. Raises ``ValueError`` when ``pairs`` is empty or has one label only."""
    config = config or RankerTrainConfig()
    config.validate()
    if not pairs:
        raise ValueError("no training pairs: the recall found no candidate for any mention")
    positives = sum(p.label > 0.5 for p in pairs)
    if positives in (0, len(pairs)):
        raise ValueError(
            f"all {len(pairs)} training pairs have the same label ({positives} positive): "
            "check that the gold IDs of the mentions are concepts of the index"
        )
    listwise = config.loss == "listwise"
    if listwise:
        per_epoch = len(listwise_batches(pairs, config.batch_size, config.seed))
    else:
        per_epoch = math.ceil(len(pairs) / config.batch_size)
    total = per_epoch * config.epochs
    optimizer = _optimizer(model, config)
    scheduler = build_scheduler(optimizer, int(config.warmup * total), total)
    loss_fn = nn.BCEWithLogitsLoss()
    model.train()
    step, epoch_loss, start = 0, [], time.perf_counter()
    bar = tqdm(total=total, desc="training ranker", unit="step", disable=not show_progress)
    try:
        for epoch in range(config.epochs):
            order = torch.randperm(
                len(pairs), generator=torch.Generator().manual_seed(config.seed + epoch)
            ).tolist()
            running = 0.0
            if listwise:
                batches = listwise_batches(pairs, config.batch_size, config.seed + epoch)
            else:
                size = config.batch_size
                batches = [[order[i : i + size]] for i in range(0, len(order), size)]
            for groups in batches:
                chunk = [pairs[i] for group in groups for i in group]
                torch.manual_seed(config.seed * 1_000_003 + step)  # dropout, reproducible
                if listwise:
                    loss = _listwise_loss(model, pairs, groups)
                else:
                    batch = model.tokenize([p.mention for p in chunk], [p.candidate for p in chunk])
                    labels = torch.tensor([p.label for p in chunk], device=model.device)
                    loss = loss_fn(model(batch), labels)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()  # type: ignore[no-untyped-call]
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                value = float(loss.detach())
                running += value * len(chunk)
                step += 1
                bar.update(1)
                bar.set_postfix(loss=f"{value:.4f}")
                if on_step is not None:
                    on_step(step, value)
            epoch_loss.append(running / len(pairs))
            logger.info("ranker epoch %d: mean loss %.4f", epoch + 1, epoch_loss[-1])
    finally:
        bar.close()
        model.eval()
    return RankerTrainStats(
        len(pairs), positives, step, epoch_loss, round(time.perf_counter() - start, 1)
    )
