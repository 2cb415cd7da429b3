"""The settings every training run shares: inputs, model, optimisation, output, dev, runtime.

Defaults are the recommended CPU recipe (see ``docs/results/training.md``): the synonym-only MS loss over
KG synonyms with CODER++-style hard-negative batches, 1,500 steps × 128 terms, lr 5e-5, frozen
embeddings and lowest two layers, bf16 autocast — at this budget it beat CODER's relation loss on
every dev set.
"""

# opt() returns a dataclasses.Field, as field() does: no shared mutable default
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path

from termnorm.encoders.pooling import Pooling
from termnorm.training.config.base import Settings, opt

__all__ = ["PROTOTYPE_LOSSES", "BatchKind", "LossKind", "Precision", "SharedConfig", "TrainData"]


class LossKind(StrEnum):
    """The built-in objectives (``+sty`` adds the semantic-type classification loss); ``--loss``
    takes any name of :data:`termnorm.training.objectives.OBJECTIVES`."""

    CODER = "coder"  # L_MS + 1.0 · L_rel (cos(M_rᵀ e_h, e_t))
    MS = "ms"  # synonym-only L_MS (SapBERT-like baseline)
    MS_V2 = "ms-v2"  # synonym-only MS loss v2: margins λ_p, λ_n (--ms-lam-pos, --ms-lam-neg)
    MS_V3 = "ms-v3"  # synonym-only MS loss v3: per-pair margins from a KGE (--kge)
    TRANSE = "transe"  # L_MS + 0.1 · L_rel,T (−‖e_h + r − e_t‖, α 0.2, β 5)
    TRANSE_MARGIN = "transe-margin"  # L_MS + 1.0 · margin TransE, corrupted tails (CODER v1)
    CODER_STY = "coder+sty"
    MS_STY = "ms+sty"
    TRANSE_MARGIN_STY = "transe-margin+sty"
    TRIPLET = "triplet"  # batch-hard soft-margin triplet, Train:O/OD texts (training/triplet.py)
    KGE_INJECT = "kge-inject"  # KGE injection pre-training: L_MLM + L_EL (kge_injection.py)
    MTCG = "mtcg"  # multi-task candidate generator: mention triples + implication head (mtcg.py)
    DISTILL = "distill"  # multilingual knowledge distillation onto a frozen teacher (distill.py)

    @property
    def relation(self) -> str | None:
        """``matrix``, ``transe``, ``transe-margin`` or ``None`` (synonym-only)."""
        base = self.value.split("+")[0]
        return {"coder": "matrix", "transe": "transe", "transe-margin": "transe-margin"}.get(base)

    @property
    def sty(self) -> bool:
        """Whether the semantic-type loss is on."""
        return self.value.endswith("+sty")


class BatchKind(str, Enum):
    """Where the MS losses' batches come from."""

    KG = "kg"  # CODER's KG sampler: m-repeated synonym/relation groups (training/sampler.py)
    PROTOTYPE = "prototype"  # prototypes + k positives + m faiss negatives (training/prototype.py)


#: the losses prototype batches serve (synonym-only MS losses)
PROTOTYPE_LOSSES = ("ms", "ms-v2", "ms-v3")


class Precision(str, Enum):
    """Autocast dtype: ``auto`` = bf16 where the device supports it (CUDA fp16 otherwise)."""

    AUTO = "auto"
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"


class TrainData(str, Enum):
    """What a run trains on: the KG's terms (``o``), or those plus annotated mentions (``od``)."""

    O = "o"  # noqa: E741 - the paper's name (Xu & Bethard 2021: Train:O, Train:OD)
    OD = "od"


@dataclass
class SharedConfig(Settings):
    """What the trainer, the data and every objective read (module doc)."""

    kg: Path | None = opt(
        None, "KG folder written by 'termnorm kg build'.", cli_required=True, exists="dir"
    )
    out: Path | None = opt(
        None, "Output model folder (sentence-transformers layout).", cli_required=True
    )
    base_model: Path | None = opt(None, "Start model folder (default: all-MiniLM-L6-v2).")
    pooling: Pooling | None = opt(None, "cls or mean (default: the model's own, else mean).")
    loss: str = opt(
        LossKind.MS,
        "Objective: a CODER loss (ms = synonyms only), '+sty' adds the semantic-type "
        "loss; ms-v2 / ms-v3 = the MS loss with separate margins / with per-pair margins "
        "from a KGE (--kge); triplet = the triplet network; mtcg = the multi-task "
        "candidate generator (mention triples + implication-number head, --mentions). "
        "'termnorm train --loss NAME --help' shows the options of objective NAME.",
        aliases=("--objective",),
    )
    batches: BatchKind = opt(
        BatchKind.KG,
        "kg = CODER's KG sampler; prototype = the KGE paper's prototype batches (P "
        "prototypes, k positives, m negatives from a faiss index of all training texts "
        "rebuilt every epoch; --loss ms, ms-v2 or ms-v3).",
    )
    train_data: TrainData = opt(
        TrainData.O,
        "o = KG terms only; od = plus --mentions (triplet: the mentions repeated to "
        "--od-ratio; CODER losses: each mention joins its concept's terms).",
    )
    mentions: tuple[str, ...] = opt((), "--train-data od: annotated training mention files.")
    mentions_format: str | None = opt(None, "Format of --mentions (detected when omitted).")
    kge: Path | None = opt(
        None,
        "--loss ms-v3 (required there, refused otherwise): KGE folder written by "
        "'termnorm kge train' on the same KG as --kg; the margin of each pair comes from "
        "the KGE similarity of its two concepts.",
        exists="dir",
    )
    corpus: tuple[str, ...] = opt(
        (),
        "Text corpus files (PubTator title+abstract, or --corpus-format text: one document "
        "a line) in which KG terms are matched: contextual mentions for --batches "
        "prototype, mention passages for --loss kge-inject. Gold annotations are not read.",
    )
    corpus_format: str | None = opt(None, "Format of --corpus: text, pubtator, ... (detected).")
    steps: int = opt(1500, "Optimizer steps.", min=1)
    k: int = opt(64, "Triplet slots per batch (the batch holds 2k terms).")
    lr: float = opt(5e-5, "Peak learning rate (AdamW).")
    weight_decay: float = opt(0.01, "AdamW weight decay.")
    relation_lr: float | None = opt(None, "Learning rate of relation/STY heads (default: lr).")
    warmup: float = opt(0.06, "Warm-up steps: a count (>= 1) or a share of --steps (< 1).")
    grad_accum: int = opt(1, "Gradient accumulation (micro-batches per step).", min=1)
    max_grad_norm: float = opt(1.0, "Gradient clipping norm (0 = off).")
    max_length: int = opt(24, "Max tokens per term.")
    precision: Precision = opt(Precision.AUTO, "fp32, bf16, fp16 or auto.")
    freeze_embeddings: bool = opt(True, "Freeze the token/position embeddings.")
    freeze_layers: int = opt(2, "Freeze the lowest N transformer layers.")
    seed: int = opt(13, "Random seed (sampling, dropout, init of heads).")
    log_every: int = opt(10, "Write a JSONL log record every N steps.", min=1)
    checkpoint_every: int = opt(500, "Save a resumable checkpoint every N steps (0 = off).", min=0)
    keep_checkpoints: int = opt(2, "Checkpoints kept on disk (plus the best one).", min=1)
    clean_checkpoints: bool = opt(True, "Delete the checkpoints once the run has finished.")
    overwrite: bool = opt(False, "Replace an existing, non-empty --out folder.", "--overwrite")
    dev: Path | None = opt(None, "Mention file for periodic dev evaluation (acc@1).", exists="path")
    dev_format: str | None = opt(None, "Format of the dev mention file (see 'termnorm eval').")
    dev_kg: Path | None = opt(
        None, "KG whose terms the dev mentions are matched to (default: --kg).", exists="path"
    )
    eval_every: int = opt(0, "Evaluate on --dev every N steps (0 = only at the end).", min=0)
    keep_best: bool = opt(
        True,
        "With --dev, the output holds the best model by the dev evaluator's primary "
        "metric (acc@1).",
        "--keep-best/--keep-last",
    )
    wise_alpha: float = opt(
        1.0,
        "WiSE-FT: save alpha*trained + (1-alpha)*base weights (1 = the trained ones; "
        "0.5 is WiSE-FT's default). The trained weights stay in finetuned.safetensors.",
    )
    device: str | None = opt(None, "cpu, cuda, cuda:1 ... (default: cuda when present).")
    threads: int | None = opt(None, "torch CPU threads (default: torch's choice).")
    encode_batch: int = opt(256, "Batch size when embedding concepts or dev terms.", min=1)

    @property
    def uses_domain_groups(self) -> bool:
        """CODER's sampler draws domain groups: ``--train-data od`` with a non-triplet loss."""
        return self.train_data is TrainData.OD and self.loss not in (
            LossKind.TRIPLET,
            LossKind.MTCG,
        )

    @property
    def warmup_steps(self) -> int:
        """Warm-up as a step count."""
        return int(self.warmup) if self.warmup >= 1 else round(self.warmup * self.steps)

    def validate(self) -> None:
        """Fail fast on impossible shared settings, naming the flag."""
        self.check_bounds()
        if not 0.0 < self.wise_alpha <= 1.0:
            raise ValueError(f"--wise-alpha must be in (0, 1] (got {self.wise_alpha})")
        if self.warmup < 0 or self.warmup_steps > self.steps:
            raise ValueError(
                f"--warmup {self.warmup} means {self.warmup_steps} warm-up steps, outside "
                f"[0, --steps {self.steps}]: give a share < 1 or fewer steps"
            )
        if self.dev is not None and self.dev_format is None:
            raise ValueError("--dev needs --dev-format")
        kge_losses = (LossKind.MS_V3, LossKind.KGE_INJECT)
        if self.loss in kge_losses and self.kge is None:
            raise ValueError(
                f"--loss {self.loss} needs --kge KGE, a folder written by 'termnorm kge "
                "train --kg KG --model transe --out KGE' on the same KG as --kg"
            )
        if self.kge is not None and self.loss not in (*kge_losses, LossKind.DISTILL):
            raise ValueError(
                f"--kge is only used by --loss ms-v3 (got --loss {self.loss}), "
                "--loss kge-inject and --loss distill --distill-with ms-v3; drop --kge or "
                "pass one of them"
            )
        if self.corpus and not (
            self.batches is BatchKind.PROTOTYPE or self.loss is LossKind.KGE_INJECT
        ):
            raise ValueError(
                "--corpus is read by --batches prototype (contextual mentions) and --loss "
                "kge-inject (mention passages); pass one of them or drop --corpus"
            )
