"""The training loop, shared by every objective: batches → loss → AdamW steps → a model folder.

A :class:`Trainer` is composed of a config, the encoder being trained, a batch source, an
objective and an optional evaluator (the parts and how new ones plug in:
:mod:`termnorm.training.protocols`; the compositions: :mod:`termnorm.training.coder`,
:mod:`termnorm.training.triplet`, :func:`termnorm.training.run.build_trainer`), and owns what
every run shares.

One step = ``grad_accum`` micro-batches (per rank); each is encoded (transformer → pooling →
float32 vectors) and scored by the objective; gradients are averaged, clipped, applied; the
learning rate follows a linear warm-up then a linear decay. Before each step the batch source
may re-embed with the current weights (hard negatives). Dropout is reseeded per (step, shard)
and batches are counter-based, so a resumed run reproduces the uninterrupted one exactly.
SIGINT/SIGTERM finish the current step, write a checkpoint and return with
``interrupted=True``. The evaluator runs every ``eval_every`` steps and at the end; with
``keep_best`` the output holds the weights of its best ``primary_metric``.

Output (``config.out``): the encoder as a sentence-transformers folder, the objective's heads
(``relations/`` for CODER's relation loss, see :mod:`termnorm.losses.relation_head`),
``train_log.jsonl``, ``training_config.json`` and a model card ``README.md``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from tqdm.auto import tqdm

from termnorm._artifacts import atomic_dir
from termnorm.encoders import DEFAULT_MAX_LENGTH, TermEncoder, default_model_path
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.training import checkpoint as ckpt
from termnorm.training.config import RUNTIME_KEYS, TrainConfig
from termnorm.training.distributed import DistInfo, barrier, init_distributed
from termnorm.training.model import EncoderAndObjective
from termnorm.training.model_card import write_model_card
from termnorm.training.optim import (
    autocast,
    build_optimizer,
    build_scheduler,
    freeze,
    resolve_precision,
)
from termnorm.training.protocols import BatchSource, Evaluator, Objective
from termnorm.training.run_control import (
    StopFlag,
    StopRequested,
    append_log,
    peak_rss_mb,
    truncate_log,
)

logger = logging.getLogger(__name__)

ENCODE_PROGRESS_MIN = 2_000
"""A batch source's re-embedding of this many texts or more shows a progress bar."""

__all__ = ["LOG_FILE", "TrainResult", "Trainer"]

LOG_FILE = "train_log.jsonl"
CONFIG_FILE = "training_config.json"


@dataclass
class TrainResult:
    """What a run produced (``rank``: the process that returns it; rank 0 wrote the output)."""

    out: Path
    steps: int
    interrupted: bool = False
    signal: int | None = None
    final_metrics: dict[str, float] = field(default_factory=dict)
    best: dict[str, Any] | None = None
    rank: int = 0


class Trainer:
    """Runs one :class:`TrainConfig` with the given parts (see module doc).

    Args:
        config: the run's settings (``out`` required).
        encoder: the model being trained (:func:`~termnorm.training.model.load_base_encoder`).
        source: the batches (:class:`~termnorm.training.protocols.BatchSource`).
        objective: the loss (:class:`~termnorm.training.protocols.Objective`).
        kg: the KG the batches come from (its counts and card go into the model card).
        evaluator: ``encoder -> metrics`` with a ``primary_metric`` (the metric keep-best
            follows), e.g. :class:`termnorm.evaluation.dev.DevEvaluator`.
        dist_info: the process's DDP place (default: from torchrun's environment).
    """

    def __init__(
        self,
        config: TrainConfig,
        encoder: TermEncoder,
        source: BatchSource,
        objective: Objective,
        *,
        kg: KnowledgeGraph,
        evaluator: Evaluator | None = None,
        dist_info: DistInfo | None = None,
    ) -> None:
        config.validate()
        if config.out is None:
            raise ValueError("the training config needs an output folder (--out)")
        if evaluator is not None and not isinstance(
            getattr(evaluator, "primary_metric", None), str
        ):
            raise TypeError(
                f"the evaluator {evaluator!r} has no primary_metric: give it a 'primary_metric' "
                "attribute naming the metric (one of its keys) by which the best model is kept"
            )
        self.config = config
        self.out = Path(config.out)
        self.encoder = encoder
        self.source = source
        self.objective = objective
        self.kg = kg
        self.evaluator = evaluator
        self.info = dist_info or init_distributed(config.device)
        self.best: dict[str, Any] | None = None
        self.elapsed_before = 0.0  # wall time of earlier sessions of a resumed run
        self.t0 = time.perf_counter()
        self.lr = 0.0  # learning rate of the last optimizer step
        self._setup()

    # ------------------------------------------------------------------ setup
    def _setup(self) -> None:
        c, info = self.config, self.info
        self.module = EncoderAndObjective(
            self.encoder.model, self.encoder.pooling, self.objective, self.encoder.markers
        ).to(info.device)
        for name, param in self.encoder.model.named_parameters():
            if name.startswith("pooler."):  # BERT's pooler: not part of the term vector
                param.requires_grad_(False)
        frozen = freeze(self.encoder.model, c.freeze_embeddings, c.freeze_layers)
        if frozen:
            logger.info("froze %d parameters", frozen)
        heads = list(self.objective.parameters())
        self.optimizer = build_optimizer(self.encoder.model, heads, c)
        self.scheduler = build_scheduler(self.optimizer, c.warmup_steps, c.steps)
        self.dtype = resolve_precision(c.precision, info.device)
        self.scaler = torch.amp.GradScaler(  # type: ignore[attr-defined]
            info.device.type, enabled=self.dtype is torch.float16 and info.device.type == "cuda"
        )
        self.wrapped: nn.Module = self.module
        if info.enabled:
            ids = [info.device.index] if info.device.type == "cuda" else None
            self.wrapped = DistributedDataParallel(self.module, device_ids=ids)

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
        self._refuse_changed_settings(state["config"], latest)
        self.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])
        self.source.load_state_dict(state["sampler"])
        self.elapsed_before = float(state.get("elapsed_s", 0.0))
        self.best = state.get("best")
        ckpt.restore_rng(state["rng"])
        step = int(state["step"])
        if self.info.is_main:
            truncate_log(self.out / LOG_FILE, step)
        logger.info("resumed from %s (step %d)", latest, step)
        return step

    def _refuse_changed_settings(self, saved: dict[str, Any], latest: Path) -> None:
        """Raise when the run's settings differ from the checkpoint's beyond the runtime ones
        (:meth:`TrainConfig.changed_from`): a resumed run must be the run it continues."""
        changed = self.config.changed_from(saved)
        if changed:
            raise ArtifactMismatchError(
                f"--resume: {latest} was written with other settings: {'; '.join(changed)}. "
                "Resume with the checkpoint's settings (the ones in its training config), or "
                "train from step 0 with --overwrite or another --out. Only "
                f"{', '.join(sorted(RUNTIME_KEYS))} may change on resume"
            )

    # ------------------------------------------------------------------ running
    def train(self, resume: bool = False) -> TrainResult:
        """Run (or continue) the job; returns when done or after a signal."""
        start = self._prepare_out(resume)
        self._calibrate()
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
                try:
                    self.source.before_step(step, self._encode)
                except StopRequested:  # a signal while the source encoded: as after a step
                    self._checkpoint(step)
                    return self._result(step, interrupted=True)
                tick = time.perf_counter()
                parts, n_terms = self._step(step)
                step += 1
                dt = time.perf_counter() - tick
                terms_per_s = n_terms * info.world_size / dt
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
                    return self._result(step, interrupted=True)
                if c.checkpoint_every and step % c.checkpoint_every == 0 and step < c.steps:
                    self._checkpoint(step)
            bar.close()
            final = self._evaluate(step) if self.evaluator is not None else {}
            if self.stop.check():  # a signal during the final evaluation: keep the last step
                self._checkpoint(step)
                return self._result(step, interrupted=True)
            self._finish(step, final)  # a signal from here on is noted; the run completes
        finally:
            bar.close()
            self.stop.restore()
        return self._result(step, final=final)

    def _result(
        self, step: int, interrupted: bool = False, final: dict[str, float] | None = None
    ) -> TrainResult:
        signal = self.stop.signal if interrupted else None
        return TrainResult(
            self.out, step, interrupted, signal, final or {}, self.best, self.info.rank
        )

    def _elapsed(self) -> float:
        """Training wall time in seconds, earlier sessions of a resumed run included."""
        return self.elapsed_before + time.perf_counter() - self.t0

    def _calibrate(self) -> None:
        """Let the objective measure what it sets from the first batch, before step 0.

        Done on shard 0 of step 0, identically on every process, so that DDP ranks (which
        draw different shards) and a single process agree from the first step on; a value
        restored from a checkpoint is not measured again.
        """
        if not self.objective.needs_first_batch:
            return
        batch = self.source.batch(0, 0)
        with torch.no_grad(), autocast(self.info.device, self.dtype):
            self.module(self._tokens(batch), batch)

    def _step(self, step: int) -> tuple[dict[str, float], int]:
        """One optimizer step: the mean loss parts and the number of texts this rank encoded."""
        c, info = self.config, self.info
        self.wrapped.train()
        totals: dict[str, float] = {}
        n_terms = 0
        for micro in range(c.grad_accum):
            shard = info.rank * c.grad_accum + micro
            torch.manual_seed(c.seed * 1_000_003 + step * 1_009 + shard)  # dropout stream
            batch = self.source.batch(step, shard)
            tokens = self._tokens(batch)
            n_terms += len(batch.terms)
            sync = micro == c.grad_accum - 1 or not info.enabled
            ctx = self.wrapped.no_sync() if not sync else contextlib.nullcontext()  # type: ignore[operator]
            with ctx, autocast(info.device, self.dtype):
                parts = self.wrapped(tokens, batch)
            self.scaler.scale(parts["loss"] / c.grad_accum).backward()
            for name, value in parts.items():
                totals[name] = totals.get(name, 0.0) + float(value.detach()) / c.grad_accum
        if c.max_grad_norm > 0:
            self.scaler.unscale_(self.optimizer)
            params = [p for p in self.module.parameters() if p.requires_grad]
            torch.nn.utils.clip_grad_norm_(params, c.max_grad_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.lr = float(self.scheduler.get_last_lr()[0])  # the rate this step used
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return totals, n_terms

    def _tokens(self, batch: Any) -> dict[str, torch.Tensor]:
        """The batch's own ``tokens`` on the device, else its ``terms`` tokenized."""
        given = getattr(batch, "tokens", None)
        if given is not None:
            return {k: v.to(self.info.device) for k, v in given.items()}
        return self.encoder.tokenize(batch.terms)

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts`` with the current weights (for the batch source's refreshes of
        its hard negatives); from :data:`ENCODE_PROGRESS_MIN` texts on with a progress bar,
        since the first refresh runs before step 1 (minutes on a large KG). A signal stops it
        after the batch in progress (:class:`StopRequested`, caught in :meth:`train`)."""
        show = self.info.is_main and len(texts) >= ENCODE_PROGRESS_MIN
        with autocast(self.info.device, self.dtype):
            return self.encoder.encode(
                texts,
                batch_size=self.config.encode_batch,
                show_progress=show,
                desc=f"hard negatives: encoding {len(texts):,} terms",
                on_batch=self.stop.between_batches,
            )

    # ------------------------------------------------------------------ evaluation
    def _evaluate(self, step: int) -> dict[str, float]:
        metrics: dict[str, float] = {}
        if self.evaluator is not None and self.info.is_main:
            tick = time.perf_counter()
            with autocast(self.info.device, self.dtype):
                metrics = dict(self.evaluator(self.encoder))
            self._log({"step": step, "eval": metrics, "eval_s": time.perf_counter() - tick})
            primary = self.evaluator.primary_metric
            if primary not in metrics:
                raise KeyError(
                    f"the evaluator's primary_metric {primary!r} is not among its metrics "
                    f"({', '.join(sorted(metrics))})"
                )
            score = metrics[primary]
            if self.best is None or score > self.best["score"]:
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
                "model": self.module.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "sampler": self.source.state_dict(),
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
        self.objective.save(folder)

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
                sampler_stats=self.source.stats(),
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
