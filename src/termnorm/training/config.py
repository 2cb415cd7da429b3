"""Configuration of one training job: a dataclass whose fields are the ``termnorm train`` options.

Each field's metadata (:func:`_h`) holds its help text and how its command-line option is
declared; ``termnorm train`` generates one option per field from them, so a default and its
help live here only. :meth:`TrainConfig.from_dict` reads JSON-like dicts (``--config`` files,
``termnorm.train(**overrides)``) and refuses unknown keys, naming the closest valid ones.

Defaults are the recommended CPU recipe (see README "Results"): the synonym-only MS loss over
KG synonyms with CODER++-style hard-negative batches, 1,500 steps × 128 terms, lr 5e-5, frozen
embeddings and lowest two layers, bf16 autocast — at this budget it beat CODER's relation loss on
every dev set. ``TrainConfig.paper()`` gives CODER's full-size settings (MS + relation loss,
k = 128, m = 8, lr 2e-5, 10k warm-up, 100k steps, accumulation 8).
"""

from __future__ import annotations

import difflib
import functools
import math
import types
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from termnorm.encoders.pooling import Pooling

__all__ = [
    "BatchKind",
    "ImplicationWeighting",
    "LossKind",
    "NegativeKind",
    "Precision",
    "TrainConfig",
    "TrainData",
    "check_batch_shape",
]


def check_batch_shape(k: int, m: int, flag: str = "") -> None:
    """``ValueError`` unless 2 <= m <= sqrt(k) (so k >= 4); ``flag`` prefixes the names
    (``"--"`` in CLI messages)."""
    if k < 4:
        raise ValueError(f"{flag}k must be at least 4, as m >= 2 needs m*m <= k (got {k})")
    if m < 2 or m > math.isqrt(k):
        raise ValueError(
            f"{flag}m must satisfy 2 <= m <= sqrt(k) = {math.sqrt(k):.2f} (got m={m}, "
            f"k={k}); raise {flag}k or lower {flag}m"
        )


class LossKind(str, Enum):
    """Which objective to train (``+sty`` adds the semantic-type classification loss)."""

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
    KGE_INJECT = (
        "kge-inject"  # KGE injection pre-training: L_MLM + L_EL (training/kge_injection.py)
    )
    MTCG = "mtcg"  # multi-task candidate generator: mention triples + implication head (mtcg.py)

    @property
    def relation(self) -> str | None:
        """``matrix``, ``transe``, ``transe-margin`` or ``None`` (synonym-only)."""
        base = self.value.split("+")[0]
        synonym_only = {"ms": None, "ms-v2": None, "ms-v3": None, "triplet": None, "mtcg": None}
        synonym_only["kge-inject"] = None
        return {"coder": "matrix", **synonym_only}.get(base, base)

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


class NegativeKind(str, Enum):
    """How ``--loss mtcg`` picks the k_n negative terms of a training mention (Liang et al.
    2021, section 3.1.2; modules in :mod:`termnorm.training.negatives`)."""

    ONLINE = "online"  # top-k_n wrong concepts of the current model, re-mined every epoch
    RANDOM = "random"  # uniformly drawn wrong concepts, new ones every epoch
    TFIDF = "tfidf"  # the k_n wrong concepts nearest by char 3-gram TF-IDF (fixed)
    TREE = "tree"  # siblings and cousins of the gold concept through is_a edges
    KEYWORD = "keyword"  # the gold name with a site or type keyword swapped (--keywords)


class ImplicationWeighting(str, Enum):
    """Class weights of the implication-number cross-entropy (:mod:`termnorm.losses.implication`)."""

    BALANCED = "balanced"  # w_c = N / (C n_c) from the training items (termnorm's default)
    NONE = "none"  # the paper's plain mean


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


def _h(
    text: str,
    flag: str | None = None,
    *,
    cli_required: bool = False,
    exists: str | None = None,
    aliases: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Field metadata: the help text, and how ``termnorm train`` declares the field's option.

    Args:
        text: the help text.
        flag: the option's names when they are not the default ``--field-name`` (booleans:
            ``--field-name/--no-field-name``).
        cli_required: the command needs the option (the Python API may pass the value otherwise).
        exists: ``"dir"`` (an existing folder) or ``"path"`` (an existing file or folder).
        aliases: further names of the option (``--objective`` for ``--loss``).
    """
    return {
        "help": text,
        "flag": flag,
        "cli_required": cli_required,
        "exists": exists,
        "aliases": aliases,
    }


@dataclass
class TrainConfig:
    """Everything that determines a training run (saved in checkpoints and the model card)."""

    kg: Path | None = field(
        default=None,
        metadata=_h("KG folder written by 'termnorm kg build'.", cli_required=True, exists="dir"),
    )
    out: Path | None = field(
        default=None,
        metadata=_h("Output model folder (sentence-transformers layout).", cli_required=True),
    )
    base_model: Path | None = field(
        default=None, metadata=_h("Start model folder (default: all-MiniLM-L6-v2).")
    )
    pooling: Pooling | None = field(
        default=None, metadata=_h("cls or mean (default: the model's own, else mean).")
    )
    loss: LossKind = field(
        default=LossKind.MS,
        metadata=_h(
            "Objective: a CODER loss (ms = synonyms only), '+sty' adds the semantic-type "
            "loss; ms-v2 / ms-v3 = the MS loss with separate margins / with per-pair margins "
            "from a KGE (--kge); triplet = the triplet network; mtcg = the multi-task "
            "candidate generator (mention triples + implication-number head, --mentions).",
            aliases=("--objective",),
        ),
    )
    steps: int = field(default=1500, metadata=_h("Optimizer steps."))
    k: int = field(default=64, metadata=_h("Triplet slots per batch (the batch holds 2k terms)."))
    m: int = field(
        default=2, metadata=_h("Repeats of each sampled triplet in a batch (2 <= m <= sqrt(k)).")
    )
    synonym_share: float = field(
        default=0.75,
        metadata=_h(
            "Share of the k slots filled with synonym-only groups (1.0 without relations or "
            "with a synonym-only --loss)."
        ),
    )
    lang_balanced: bool = field(
        default=False, metadata=_h("Draw a language first, then a term (multilingual KGs).")
    )
    lr: float = field(default=5e-5, metadata=_h("Peak learning rate (AdamW)."))
    weight_decay: float = field(default=0.01, metadata=_h("AdamW weight decay."))
    relation_lr: float | None = field(
        default=None, metadata=_h("Learning rate of relation/STY heads (default: lr).")
    )
    warmup: float = field(
        default=0.06, metadata=_h("Warm-up steps: a count (>= 1) or a share of --steps (< 1).")
    )
    grad_accum: int = field(
        default=1, metadata=_h("Gradient accumulation (micro-batches per step).")
    )
    max_grad_norm: float = field(default=1.0, metadata=_h("Gradient clipping norm (0 = off)."))
    max_length: int = field(default=24, metadata=_h("Max tokens per term."))
    precision: Precision = field(default=Precision.AUTO, metadata=_h("fp32, bf16, fp16 or auto."))
    freeze_embeddings: bool = field(
        default=True, metadata=_h("Freeze the token/position embeddings.")
    )
    freeze_layers: int = field(default=2, metadata=_h("Freeze the lowest N transformer layers."))
    hard_negatives: bool = field(
        default=True, metadata=_h("Compose batches of concepts near each other (CODER++-style).")
    )
    hard_share: float = field(
        default=0.75, metadata=_h("Share of slots composed from near-concept clusters.")
    )
    hard_refresh: int = field(
        default=250, metadata=_h("Re-embed concept names every N steps to refresh neighbours.")
    )
    hard_neighbours: int = field(default=16, metadata=_h("Neighbours kept per concept."))
    hard_cluster: int = field(default=4, metadata=_h("Concept groups per near-concept cluster."))
    hard_max_concepts: int = field(
        default=10_000,
        metadata=_h("Concepts embedded per neighbour refresh (a new random subset each time)."),
    )
    rel_weight: float | None = field(
        default=None, metadata=_h("Weight μ of the relation loss (default per --loss).")
    )
    sty_weight: float = field(
        default=0.1, metadata=_h("Weight of the semantic-type loss (the '+sty' objectives).")
    )
    transe_margin: float = field(default=1.0, metadata=_h("Margin γ of the transe-margin loss."))
    ms_lam_pos: float = field(
        default=1.0, metadata=_h("--loss ms-v2: positive margin λ_p (the paper's 1.0).")
    )
    ms_lam_neg: float = field(
        default=0.5, metadata=_h("--loss ms-v2: negative margin λ_n (the paper's 0.5).")
    )
    kge: Path | None = field(
        default=None,
        metadata=_h(
            "--loss ms-v3 (required there, refused otherwise): KGE folder written by "
            "'termnorm kge train' on the same KG as --kg; the margin of each pair comes from "
            "the KGE similarity of its two concepts.",
            exists="dir",
        ),
    )
    batches: BatchKind = field(
        default=BatchKind.KG,
        metadata=_h(
            "kg = CODER's KG sampler; prototype = the KGE paper's prototype batches (P "
            "prototypes, k positives, m negatives from a faiss index of all training texts "
            "rebuilt every epoch; --loss ms, ms-v2 or ms-v3)."
        ),
    )
    prototypes: int = field(default=4, metadata=_h("--batches prototype: prototypes P per batch."))
    prototype_positives: int = field(
        default=20, metadata=_h("--batches prototype: positives k per prototype.")
    )
    prototype_negatives: int = field(
        default=30, metadata=_h("--batches prototype: possibly-hard negatives m per prototype.")
    )
    prototypes_per_concept: int = field(
        default=3,
        metadata=_h("--batches prototype: prototypes per concept (a new synonym each first)."),
    )
    prototype_refresh: int = field(
        default=0,
        metadata=_h(
            "--batches prototype: rebuild the negatives' index every N steps (0 = every "
            "epoch; searches at most --hard-max-concepts prototypes)."
        ),
    )
    corpus: tuple[str, ...] = field(
        default=(),
        metadata=_h(
            "Text corpus files (PubTator title+abstract, or --corpus-format text: one document "
            "a line) in which KG terms are matched: contextual mentions for --batches "
            "prototype, mention passages for --loss kge-inject. Gold annotations are not read."
        ),
    )
    corpus_format: str | None = field(
        default=None, metadata=_h("Format of --corpus: text, pubtator, ... (detected).")
    )
    context_words: int = field(
        default=8, metadata=_h("Words on each side of a contextual mention's [M_s] ... [M_e].")
    )
    contexts_per_term: int = field(
        default=4, metadata=_h("Contextual mentions kept per KG surface form (the paper's 4).")
    )
    inject_layer: int = field(
        default=4,
        metadata=_h(
            "--loss kge-inject: inject after this transformer layer (the paper: 8 of BERT's "
            "12; 4 of MiniLM's 6)."
        ),
    )
    inject_candidates: int = field(
        default=10, metadata=_h("--loss kge-inject: entities n the linker mixes per mention.")
    )
    mlm_probability: float = field(
        default=0.15, metadata=_h("--loss kge-inject: share of tokens masked (whole mentions).")
    )
    passage_length: int = field(
        default=96, metadata=_h("--loss kge-inject: max tokens per training passage.")
    )
    passages_per_batch: int = field(
        default=6, metadata=_h("--loss kge-inject: passages per batch (the paper's 6).")
    )
    seed: int = field(default=13, metadata=_h("Random seed (sampling, dropout, init of heads)."))
    log_every: int = field(default=10, metadata=_h("Write a JSONL log record every N steps."))
    checkpoint_every: int = field(
        default=500, metadata=_h("Save a resumable checkpoint every N steps (0 = off).")
    )
    keep_checkpoints: int = field(
        default=2, metadata=_h("Checkpoints kept on disk (plus the best one).")
    )
    clean_checkpoints: bool = field(
        default=True, metadata=_h("Delete the checkpoints once the run has finished.")
    )
    overwrite: bool = field(
        default=False, metadata=_h("Replace an existing, non-empty --out folder.", "--overwrite")
    )
    dev: Path | None = field(
        default=None,
        metadata=_h("Mention file for periodic dev evaluation (acc@1).", exists="path"),
    )
    dev_format: str | None = field(
        default=None, metadata=_h("Format of the dev mention file (see 'termnorm eval').")
    )
    dev_kg: Path | None = field(
        default=None,
        metadata=_h(
            "KG whose terms the dev mentions are matched to (default: --kg).", exists="path"
        ),
    )
    eval_every: int = field(
        default=0, metadata=_h("Evaluate on --dev every N steps (0 = only at the end).")
    )
    keep_best: bool = field(
        default=True,
        metadata=_h(
            "With --dev, the output holds the best model by the dev evaluator's primary "
            "metric (acc@1).",
            "--keep-best/--keep-last",
        ),
    )
    wise_alpha: float = field(
        default=1.0,
        metadata=_h(
            "WiSE-FT: save alpha*trained + (1-alpha)*base weights (1 = the trained ones; "
            "0.5 is WiSE-FT's default). The trained weights stay in finetuned.safetensors."
        ),
    )
    device: str | None = field(
        default=None, metadata=_h("cpu, cuda, cuda:1 ... (default: cuda when present).")
    )
    threads: int | None = field(
        default=None, metadata=_h("torch CPU threads (default: torch's choice).")
    )
    encode_batch: int = field(
        default=256, metadata=_h("Batch size when embedding concepts or dev terms.")
    )
    # --loss triplet (termnorm.training.triplet)
    train_data: TrainData = field(
        default=TrainData.O,
        metadata=_h(
            "o = KG terms only; od = plus --mentions (triplet: the mentions repeated to "
            "--od-ratio; CODER losses: each mention joins its concept's terms)."
        ),
    )
    mentions: tuple[str, ...] = field(
        default=(), metadata=_h("--train-data od: annotated training mention files.")
    )
    mentions_format: str | None = field(
        default=None, metadata=_h("Format of --mentions (detected when omitted).")
    )
    domain_share: float = field(
        default=0.5,
        metadata=_h(
            "--train-data od, CODER losses: share of synonym groups pairing training mentions "
            "with their concept's KG terms."
        ),
    )
    od_ratio: float = field(
        default=1 / 3,
        metadata=_h("--train-data od, --loss triplet: |D|/|O| after repeating the mentions."),
    )
    texts_per_concept: int = field(
        default=2, metadata=_h("--loss triplet: texts per group, anchor + K-1 positives.")
    )

    # --loss mtcg (termnorm.training.mtcg)
    negatives: NegativeKind = field(
        default=NegativeKind.ONLINE,
        metadata=_h(
            "--loss mtcg: negative strategy: online (the current model's top wrong concepts, "
            "re-mined each epoch, random in epoch 1), random, tfidf (char 3-gram TF-IDF "
            "nearest), tree (is_a siblings/cousins) or keyword (a site/type keyword of the "
            "gold name swapped; needs --keywords)."
        ),
    )
    negatives_per_mention: int = field(
        default=4, metadata=_h("--loss mtcg: k_n, negatives per (mention, gold) pair (paper: 4).")
    )
    mention_batch: int = field(
        default=16,
        metadata=_h(
            "--loss mtcg: (mention, gold concept) pairs per micro-batch; each brings its gold "
            "name and k_n negatives, so a batch encodes (2 + k_n) texts per pair."
        ),
    )
    triplet_margin: float = field(
        default=1.0, metadata=_h("--loss mtcg: margin of the Euclidean triplet loss (paper: 1).")
    )
    implication_weight: float = field(
        default=1.0,
        metadata=_h(
            "--loss mtcg: weight of the implication-number cross-entropy (paper: 1, a plain sum)."
        ),
    )
    implication_class_weights: ImplicationWeighting = field(
        default=ImplicationWeighting.BALANCED,
        metadata=_h(
            "--loss mtcg: class weights of the implication cross-entropy: balanced "
            "(N / (C n_c) from the training items, so rare 2- and 3+-code mentions count) or "
            "none (the paper's plain mean, which learns 'one code' for everything on "
            "NCBI-disease's 1,628 : 70 : 7)."
        ),
    )
    keywords: Path | None = field(
        default=None,
        metadata=_h(
            "--negatives keyword: keyword vocabulary, a TSV with header 'keyword<TAB>kind' "
            "(kind site or type), '#' comment lines.",
            exists="path",
        ),
    )

    def __post_init__(self) -> None:
        """Values given in their JSON forms (``loss="coder"``, ``out="m"``) become typed."""
        for name, kind in _field_types().items():
            setattr(self, name, _coerce(kind, getattr(self, name)))

    # ------------------------------------------------------------------ derived
    @property
    def rel_weight_value(self) -> float:
        """μ: the explicit --rel-weight, else 1.0 (coder, transe-margin) or 0.1 (transe)."""
        if self.rel_weight is not None:
            return self.rel_weight
        return 0.1 if self.loss.relation == "transe" else 1.0

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
        """Fail fast on impossible settings, naming the flag."""
        check_batch_shape(self.k, self.m, "--")
        if not 0.0 <= self.synonym_share <= 1.0:
            raise ValueError(f"--synonym-share must be in [0, 1] (got {self.synonym_share})")
        if not 0.0 <= self.domain_share <= 1.0:
            raise ValueError(f"--domain-share must be in [0, 1] (got {self.domain_share})")
        if not 0.0 <= self.hard_share <= 1.0:
            raise ValueError(f"--hard-share must be in [0, 1] (got {self.hard_share})")
        if not 0.0 < self.wise_alpha <= 1.0:
            raise ValueError(f"--wise-alpha must be in (0, 1] (got {self.wise_alpha})")
        for flag, value in (
            ("--steps", self.steps),
            ("--grad-accum", self.grad_accum),
            ("--log-every", self.log_every),
            ("--keep-checkpoints", self.keep_checkpoints),
            ("--encode-batch", self.encode_batch),
        ):
            if value < 1:
                raise ValueError(f"{flag} must be at least 1 (got {value})")
        for flag, value in (
            ("--checkpoint-every", self.checkpoint_every),
            ("--eval-every", self.eval_every),
        ):
            if value < 0:
                raise ValueError(f"{flag} must be >= 0, 0 = never (got {value})")
        if self.warmup < 0 or self.warmup_steps > self.steps:
            raise ValueError(
                f"--warmup {self.warmup} means {self.warmup_steps} warm-up steps, outside "
                f"[0, --steps {self.steps}]: give a share < 1 or fewer steps"
            )
        if self.hard_negatives and (self.hard_refresh < 1 or self.hard_neighbours < 1):
            raise ValueError(
                "--hard-refresh and --hard-neighbours must be at least 1 "
                "(or pass --no-hard-negatives)"
            )
        if self.hard_cluster < 2 and self.hard_negatives:
            raise ValueError("--hard-cluster must be at least 2")
        if self.dev is not None and self.dev_format is None:
            raise ValueError("--dev needs --dev-format")
        kge_losses = (LossKind.MS_V3, LossKind.KGE_INJECT)
        if self.loss in kge_losses and self.kge is None:
            raise ValueError(
                f"--loss {self.loss.value} needs --kge KGE, a folder written by 'termnorm kge "
                "train --kg KG --model transe --out KGE' on the same KG as --kg"
            )
        if self.loss is LossKind.MTCG:
            for flag, value in (
                ("--negatives-per-mention", self.negatives_per_mention),
                ("--mention-batch", self.mention_batch),
            ):
                if value < 1:
                    raise ValueError(f"{flag} must be at least 1 (got {value})")
            if self.triplet_margin <= 0 or self.implication_weight < 0:
                raise ValueError(
                    "--triplet-margin must be > 0 and --implication-weight >= 0 (got "
                    f"{self.triplet_margin}, {self.implication_weight})"
                )
            if self.negatives is NegativeKind.KEYWORD and self.keywords is None:
                raise ValueError(
                    "--negatives keyword needs --keywords FILE, a TSV of 'keyword<TAB>kind' "
                    "rows (kind site or type)"
                )
        if self.kge is not None and self.loss not in kge_losses:
            raise ValueError(
                f"--kge is only used by --loss ms-v3 (got --loss {self.loss.value}) and "
                "--loss kge-inject; drop --kge or pass one of them"
            )
        self._validate_batches()

    def _validate_batches(self) -> None:
        """Prototype batches, contexts and injection settings."""
        prototype = self.batches is BatchKind.PROTOTYPE
        if prototype and self.loss.value not in PROTOTYPE_LOSSES:
            raise ValueError(
                f"--batches prototype serves --loss {', '.join(PROTOTYPE_LOSSES)} (got "
                f"{self.loss.value}); pass one of them or --batches kg"
            )
        for flag, value in (
            ("--prototypes", self.prototypes),
            ("--prototype-positives", self.prototype_positives),
            ("--prototypes-per-concept", self.prototypes_per_concept),
            ("--contexts-per-term", self.contexts_per_term),
            ("--inject-candidates", self.inject_candidates),
            ("--passages-per-batch", self.passages_per_batch),
        ):
            if value < 1:
                raise ValueError(f"{flag} must be at least 1 (got {value})")
        if self.prototype_negatives < 0 or self.context_words < 0 or self.prototype_refresh < 0:
            raise ValueError(
                "--prototype-negatives, --context-words and --prototype-refresh must be >= 0"
            )
        if self.corpus and not (prototype or self.loss is LossKind.KGE_INJECT):
            raise ValueError(
                "--corpus is read by --batches prototype (contextual mentions) and --loss "
                "kge-inject (mention passages); pass one of them or drop --corpus"
            )
        if self.loss is LossKind.KGE_INJECT:
            if not self.corpus:
                raise ValueError(
                    "--loss kge-inject needs --corpus FILE (text in which KG terms are "
                    "matched: PubTator abstracts, or --corpus-format text)"
                )
            if not 0.0 < self.mlm_probability < 1.0:
                raise ValueError(
                    f"--mlm-probability must be in (0, 1) (got {self.mlm_probability})"
                )
            if self.inject_layer < 1 or self.passage_length < 8:
                raise ValueError("--inject-layer must be >= 1 and --passage-length >= 8")
        if prototype and self.corpus and self.max_length < 4 * self.context_words:
            raise ValueError(
                f"contextual mentions of --context-words {self.context_words} need --max-length "
                f">= {4 * self.context_words} tokens (the window and the markers); raise "
                "--max-length or lower --context-words"
            )

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (paths and enums as strings)."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            out[key] = value.value if isinstance(value, Enum) else value
            if isinstance(value, Path):
                out[key] = str(value)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: object = None) -> TrainConfig:
        """Inverse of :meth:`to_dict`; values may be raw (JSON) or typed (paths, enums).

        Raises:
            ValueError: for a key that is not a field (a misspelt ``--config`` key or keyword
                must not be ignored silently), naming ``source`` (e.g. the file the keys came
                from) and the closest valid keys.
        """
        hints = _field_types()
        unknown = sorted(set(data) - set(hints))
        if unknown:
            names = sorted(hints)
            hints_text = "; ".join(
                f"{key}: did you mean {' or '.join(close)}?"
                for key in unknown
                if (close := difflib.get_close_matches(key, names, n=2))
            )
            raise ValueError(
                (f"{source}: " if source is not None else "")
                + f"unknown TrainConfig key(s) {', '.join(unknown)}"
                + (f" ({hints_text})" if hints_text else "")
                + "; the keys are the 'termnorm train' options with '_' for '-'"
            )
        return cls(**data)

    @classmethod
    def paper(cls, **overrides: Any) -> TrainConfig:
        """CODER_ENG's full-size settings (GPU): k 128, m 8, lr 2e-5, 100k steps, accum 8."""
        base: dict[str, Any] = dict(
            loss=LossKind.CODER,
            k=128,
            m=8,
            lr=2e-5,
            steps=100_000,
            warmup=10_000,
            grad_accum=8,
            max_length=32,
            synonym_share=0.0,
            hard_negatives=False,
            freeze_layers=0,
            freeze_embeddings=False,
            weight_decay=0.0,
        )
        base.update(overrides)
        return cls.from_dict(base, "TrainConfig.paper")


@functools.cache
def _field_types() -> dict[str, Any]:
    """``{field name: type}`` of :class:`TrainConfig` (annotations resolved once)."""
    return get_type_hints(TrainConfig)


def _coerce(kind: Any, value: Any) -> Any:
    """``value`` as a field of type ``kind``: paths, enums and tuples from their JSON forms."""
    if get_origin(kind) in (Union, types.UnionType):  # X | None
        if value is None:
            return None
        kind = next(arg for arg in get_args(kind) if arg is not type(None))
    if get_origin(kind) is tuple:  # tuple[str, ...]
        return tuple(_coerce(get_args(kind)[0], item) for item in value or ())
    if kind is Path or (isinstance(kind, type) and issubclass(kind, Enum)):
        return kind(value)
    if kind is str:
        return value.value if isinstance(value, Enum) else str(value)
    return value
