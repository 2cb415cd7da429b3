"""The training loop: KG batches → CODER losses → AdamW steps → a sentence-transformers folder.

One step = ``grad_accum`` micro-batches (per rank) of 2k terms each; gradients are averaged,
clipped, applied; the learning rate follows a linear warm-up then a linear decay. Every
``hard_refresh`` steps the concept neighbour table for hard-negative batches is rebuilt with
the current weights. Dropout is reseeded per (step, shard) and batches are counter-based, so a
resumed run reproduces the uninterrupted one exactly. SIGINT/SIGTERM finish the current step,
write a checkpoint and return with ``interrupted=True``.

Output (``config.out``): the encoder as a sentence-transformers folder, ``relations/`` (the
relation head, see :mod:`termnorm.losses.relation_head`), ``train_log.jsonl``,
``training_config.json`` and a model card ``README.md``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm.auto import tqdm

from termnorm._artifacts import atomic_dir
from termnorm.encoders import DEFAULT_MAX_LENGTH, TermEncoder, default_model_path
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.training import checkpoint as ckpt
from termnorm.training.config import TrainConfig
from termnorm.training.distributed import DistInfo, barrier, init_distributed
from termnorm.training.model_card import write_model_card
from termnorm.training.objective import CoderModel
from termnorm.training.optim import (
    autocast,
    build_optimizer,
    build_scheduler,
    freeze,
    resolve_precision,
)
from termnorm.training.run_control import StopFlag, append_log, peak_rss_mb, truncate_log
from termnorm.training.sampler import KGSampler

logger = logging.getLogger(__name__)

__all__ = ["LOG_FILE", "DevEvaluator", "TrainResult", "Trainer"]

LOG_FILE = "train_log.jsonl"
CONFIG_FILE = "training_config.json"
DevEvaluator = Callable[[TermEncoder], dict[str, float]]
# settings that may change between a run and its resumption without a warning
_RUNTIME_KEYS = {"device", "threads", "overwrite", "log_every", "checkpoint_every", "eval_every"}


@dataclass
class TrainResult:
    """What a run produced."""

    out: Path
    steps: int
    interrupted: bool = False
    signal: int | None = None
    final_metrics: dict[str, float] = field(default_factory=dict)
    best: dict[str, Any] | None = None


class Trainer:
    """Runs one :class:`TrainConfig`.

    Args:
        config: the run's settings (``kg`` and ``out`` required unless ``kg`` is given here).
        kg: an in-memory KG (default: ``KnowledgeGraph.load(config.kg)``).
        evaluator: ``encoder -> metrics`` for dev evaluation (built by the CLI from a mention
            file); ``primary_metric`` names the metric used to keep the best model.
        dist_info: the process's DDP place (default: from torchrun's environment).
    """

    def __init__(
        self,
        config: TrainConfig,
        kg: KnowledgeGraph | None = None,
        evaluator: DevEvaluator | None = None,
        primary_metric: str = "dev_acc@1",
        dist_info: DistInfo | None = None,
    ) -> None:
        config.validate()
        if config.out is None:
            raise ValueError("the training config needs an output folder (--out)")
        self.config = config
        self.out = Path(config.out)
        self.evaluator = evaluator
        self.primary = primary_metric
        self.info = dist_info or init_distributed(config.device)
        self.kg = kg if kg is not None else KnowledgeGraph.load(_required(config.kg, "--kg"))
        self.best: dict[str, Any] | None = None
        self.elapsed_before = 0.0  # wall time of earlier sessions of a resumed run
        self.t0 = time.perf_counter()
        self.lr = 0.0  # learning rate of the last optimizer step

    # ------------------------------------------------------------------ setup
    def _setup(self) -> None:
        c, info = self.config, self.info
        if c.threads:
            torch.set_num_threads(c.threads)
        torch.manual_seed(c.seed)
        self.encoder = TermEncoder.load(c.base_model, c.pooling, c.max_length, info.device)
        self.sampler = KGSampler(
            self.kg,
            c.k,
            c.m,
            c.synonym_share if c.loss.relation else 1.0,  # synonym-only objectives
            c.lang_balanced,
            c.seed,
            hard_share=c.hard_share if c.hard_negatives else 0.0,
            hard_cluster=c.hard_cluster,
            with_types=c.loss.sty,
            domain_share=c.domain_share if c.uses_domain_groups else 0.0,
        )
        if c.loss.relation and self.sampler.n_triplets == 0:
            logger.warning(
                "the KG has no usable relation (%d in the table, none between concepts with "
                "terms): training synonym-only (MS loss)",
                len(self.kg.relations),
            )
        if c.loss.sty and not self.sampler.type_labels:
            logger.warning("the KG has no semantic types: the STY loss is off")
        self.model = CoderModel(
            self.encoder.model,
            self.encoder.pooling,
            c,
            self.sampler.relation_labels,
            len(self.sampler.type_labels),
        ).to(info.device)
        for name, param in self.encoder.model.named_parameters():
            if name.startswith("pooler."):  # BERT's pooler: not part of the term vector
                param.requires_grad_(False)
        frozen = freeze(self.encoder.model, c.freeze_embeddings, c.freeze_layers)
        if frozen:
            logger.info("froze %d parameters", frozen)
        self.optimizer = build_optimizer(self.encoder.model, self.model.head_parameters(), c)
        self.scheduler = build_scheduler(self.optimizer, c.warmup_steps, c.steps)
        self.dtype = resolve_precision(c.precision, info.device)
        self.scaler = torch.amp.GradScaler(  # type: ignore[attr-defined]
            info.device.type, enabled=self.dtype is torch.float16 and info.device.type == "cuda"
        )
        self.wrapped: torch.nn.Module = self.model
        if info.enabled:
            ids = [info.device.index] if info.device.type == "cuda" else None
            self.wrapped = DistributedDataParallel(self.model, device_ids=ids)

    def _prepare_out(self, resume: bool) -> int:
        """Check the output folder; restore the newest checkpoint when resuming."""
        latest = ckpt.latest_checkpoint(self.out) if resume else None
        busy = latest is None and self.out.exists() and any(self.out.iterdir())
        if busy and resume and not self.config.overwrite:
            raise ArtifactMismatchError(
                f"--resume: {self.out} holds no checkpoint (a finished run removes its "
                "checkpoints, or this is not a training folder); nothing to continue. Pass "
                "--overwrite to train again from step 0 there, or choose another --out"
            )
        if busy and not self.config.overwrite:
            raise ArtifactMismatchError(
                f"{self.out} exists and is not empty; pass --resume to continue a run "
                "there or --overwrite to replace it"
            )
        if resume and latest is None:
            logger.warning("--resume: no checkpoint in %s; starting from step 0", self.out)
        barrier(self.info)
        if latest is None:
            if self.info.is_main:
                if self.out.exists():
                    shutil.rmtree(self.out)
                self.out.mkdir(parents=True)
            barrier(self.info)
            return 0
        state = ckpt.load_checkpoint(latest, "cpu")
        changed = sorted(
            key
            for key, value in self.config.to_dict().items()
            if key not in _RUNTIME_KEYS and state["config"].get(key, value) != value
        )
        if changed:
            logger.warning("resuming with changed settings: %s", ", ".join(changed))
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])
        self.sampler.load_state_dict(state["sampler"])
        self.elapsed_before = float(state.get("elapsed_s", 0.0))
        self.best = state.get("best")
        ckpt.restore_rng(state["rng"])
        step = int(state["step"])
        if self.info.is_main:
            truncate_log(self.out / LOG_FILE, step)
        logger.info("resumed from %s (step %d)", latest, step)
        return step

    # ------------------------------------------------------------------ running
    def train(self, resume: bool = False) -> TrainResult:
        """Run (or continue) the job; returns when done or after a signal."""
        self._setup()
        start = self._prepare_out(resume)
        self._calibrate_relation_scale()
        c, info = self.config, self.info
        self.stop = StopFlag(info)
        self.stop.install()
        bar = tqdm(
            total=c.steps, initial=start, desc="train", unit="step", disable=not info.is_main
        )
        step = start
        self.t0 = time.perf_counter()
        try:
            while step < c.steps:
                if c.hard_negatives and step % c.hard_refresh == 0:
                    self._refresh_neighbours(step)
                tick = time.perf_counter()
                parts = self._step(step)
                step += 1
                dt = time.perf_counter() - tick
                terms_per_s = 2 * c.k * c.grad_accum * info.world_size / dt
                bar.update(1)
                bar.set_postfix(
                    {**{k: f"{v:.3f}" for k, v in parts.items()}, "terms/s": f"{terms_per_s:.0f}"}
                )
                if info.is_main and (step % c.log_every == 0 or step == c.steps):
                    self._log(
                        {
                            "step": step,
                            "lr": self.lr,
                            **parts,
                            "s_per_step": dt,
                            "terms_per_s": terms_per_s,
                            "elapsed_s": self._elapsed(),
                            "rss_mb": peak_rss_mb(),
                        }
                    )
                if c.eval_every and step % c.eval_every == 0 and step < c.steps:
                    self._evaluate(step)
                if self.stop.check():
                    self._checkpoint(step)
                    return TrainResult(self.out, step, True, self.stop.signal, best=self.best)
                if c.checkpoint_every and step % c.checkpoint_every == 0 and step < c.steps:
                    self._checkpoint(step)
            bar.close()
            final = self._evaluate(step) if self.evaluator is not None else {}
            if self.stop.check():  # a signal during the final evaluation: keep the last step
                self._checkpoint(step)
                return TrainResult(self.out, step, True, self.stop.signal, best=self.best)
            self._finish(step, final)  # a signal from here on is noted; the run completes
        finally:
            bar.close()
            self.stop.restore()
        return TrainResult(self.out, step, False, None, final, self.best)

    def _elapsed(self) -> float:
        """Training wall time in seconds, earlier sessions of a resumed run included."""
        return self.elapsed_before + time.perf_counter() - self.t0

    def _calibrate_relation_scale(self) -> None:
        """Set a data-derived λ_rel (TransE-MS) from shard 0 of step 0 on every rank.

        Done before training, identically on all processes, so that DDP ranks (which draw
        different shards) and a single process agree on λ_rel from the first step on.
        """
        rel = getattr(self.model, "relation", None)  # the triplet objective has none
        ready = getattr(rel, "lam_ready", None)
        if ready is None or float(ready) >= 0.5:
            return  # fixed λ, or restored from a checkpoint
        batch = self.sampler.batch(0, 0)
        with torch.no_grad(), autocast(self.info.device, self.dtype):
            self.model(self.encoder.tokenize(batch.terms), batch)

    def _step(self, step: int) -> dict[str, float]:
        c, info = self.config, self.info
        self.wrapped.train()
        totals: dict[str, float] = {}
        for micro in range(c.grad_accum):
            shard = info.rank * c.grad_accum + micro
            torch.manual_seed(c.seed * 1_000_003 + step * 1_009 + shard)  # dropout stream
            batch = self.sampler.batch(step, shard)
            tokens = self.encoder.tokenize(batch.terms)
            sync = micro == c.grad_accum - 1 or not info.enabled
            ctx = self.wrapped.no_sync() if not sync else contextlib.nullcontext()  # type: ignore[operator]
            with ctx, autocast(info.device, self.dtype):
                parts = self.wrapped(tokens, batch)
            self.scaler.scale(parts["loss"] / c.grad_accum).backward()
            for name, value in parts.items():
                totals[name] = totals.get(name, 0.0) + float(value.detach()) / c.grad_accum
        if c.max_grad_norm > 0:
            self.scaler.unscale_(self.optimizer)
            params = [p for p in self.model.parameters() if p.requires_grad]
            torch.nn.utils.clip_grad_norm_(params, c.max_grad_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.lr = float(self.scheduler.get_last_lr()[0])  # the rate this step used
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return totals

    def _refresh_neighbours(self, step: int) -> None:
        c = self.config

        def encode(names: list[str]) -> Any:
            with autocast(self.info.device, self.dtype):
                return self.encoder.encode(names, batch_size=c.encode_batch)

        tick = time.perf_counter()
        self.sampler.refresh(encode, c.hard_neighbours, c.hard_max_concepts, step)
        logger.info("hard negatives: neighbour table rebuilt in %.1fs", time.perf_counter() - tick)

    # ------------------------------------------------------------------ evaluation
    def _evaluate(self, step: int) -> dict[str, float]:
        metrics: dict[str, float] = {}
        if self.evaluator is not None and self.info.is_main:
            tick = time.perf_counter()
            with autocast(self.info.device, self.dtype):
                metrics = dict(self.evaluator(self.encoder))
            self._log({"step": step, "eval": metrics, "eval_s": time.perf_counter() - tick})
            score = metrics.get(self.primary)
            if score is not None and (self.best is None or score > self.best["score"]):
                self.best = {"step": step, "score": score, "metrics": metrics}
                with atomic_dir(self.out / ckpt.CHECKPOINTS_DIR / "best") as tmp:
                    self._save_model(tmp)  # a kill mid-save keeps the previous best
            logger.info("step %d: %s", step, {k: round(v, 4) for k, v in metrics.items()})
        barrier(self.info)
        return metrics

    # ------------------------------------------------------------------ persistence
    def _checkpoint(self, step: int) -> None:
        if self.info.is_main:
            state = {
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "sampler": self.sampler.state_dict(),
                "scaler": self.scaler.state_dict(),
                "elapsed_s": self._elapsed(),
                "best": self.best,
                "config": self.config.to_dict(),
            }
            folder = ckpt.save_checkpoint(self.out, step, state, self.config.keep_checkpoints)
            logger.info("checkpoint written: %s", folder)
        barrier(self.info)

    def _save_model(self, folder: Path) -> None:
        # the inference length, not the (shorter) training one: SentenceTransformer(folder)
        # then truncates where TermEncoder.load(folder) does
        self.encoder.save(folder, max(self.config.max_length, DEFAULT_MAX_LENGTH))
        head = self.model.relation_head
        if head is not None:
            head.save(folder)

    def _finish(self, step: int, final: dict[str, float]) -> None:
        if self.info.is_main:
            best_dir = self.out / ckpt.CHECKPOINTS_DIR / "best"
            use_best = self.config.keep_best and self.best is not None and best_dir.is_dir()
            if use_best:
                for item in best_dir.iterdir():
                    target = self.out / item.name
                    if target.is_dir():
                        shutil.rmtree(target)
                    (shutil.copytree if item.is_dir() else shutil.copy2)(item, target)
            else:
                self._save_model(self.out)
            if self.config.wise_alpha < 1.0:
                self._wise_ft()
            (self.out / CONFIG_FILE).write_text(
                json.dumps(self.config.to_dict(), indent=2, default=str) + "\n"
            )
            write_model_card(
                self.out,
                self.config,
                kg_counts=self.kg.counts(),
                kg_card=self.kg.card,
                sampler_stats=self.sampler.stats(),
                log_path=self.out / LOG_FILE,
                final_metrics=final,
                best=self.best,
                selected="best" if use_best else "last",
                runtime={
                    "device": str(self.info.device),
                    "processes": self.info.world_size,
                    "autocast": str(self.dtype).replace("torch.", "") if self.dtype else "off",
                    "torch threads": torch.get_num_threads(),
                },
            )
            if self.config.clean_checkpoints:
                shutil.rmtree(self.out / ckpt.CHECKPOINTS_DIR, ignore_errors=True)
        barrier(self.info)

    def _wise_ft(self) -> None:
        """The saved encoder weights become α·trained + (1 − α)·base (WiSE-FT)."""
        from termnorm.encoders.interpolation import wise_ft_in_place

        base = Path(self.config.base_model or default_model_path())
        wise_ft_in_place(self.out, base, self.config.wise_alpha)
        alpha = self.config.wise_alpha
        logger.info("WiSE-FT: saved %.2f x trained + %.2f x %s", alpha, 1 - alpha, base)

    def _log(self, record: dict[str, Any]) -> None:
        append_log(self.out / LOG_FILE, record)


def _required(value: Path | None, flag: str) -> Path:
    if value is None:
        raise ValueError(f"{flag} is required")
    return value
