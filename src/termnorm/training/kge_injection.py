"""KGE injection pre-training (KeBioLM-style; the Italian KGE paper §3.2, formulas 4–6).

At transformer layer i (``--inject-layer``, counted from 1: after the i-th layer), for each
dictionary-matched mention m of a passage (:func:`termnorm.mentions.contexts.mention_passages`)::

    h_m      = mean of layer-i states of m's tokens                       [H]
    h_proj_m = W_proj h_m + b_proj                                         [K]  (KGE space)
    s_mj     = h_proj_m · e_j  for every entity j of the frozen KGE        [E]
    a        = softmax of the n best s_mj (the linker's candidates)       [n]
    e_m      = Σ_j a_j e_j                                                 [K]  (4)
    h_t'     = LayerNorm(h_t + W_back e_m + b_back)   for m's tokens t only

and the other tokens go on unchanged to layer i + 1. The loss (6) is::

    L = L_MLM + L_EL,   L_EL = mean_m −log softmax_j(s_mj)[entity of m]          (5)

L_EL over the mentions whose concept has an entity vector; L_MLM is the masked-LM loss with
whole-entity masking: 15 % of the tokens are drawn, and a mention any of whose tokens was
drawn is masked whole (80 % [MASK], 10 % a random token, 10 % unchanged). The entity vectors
stay fixed (unlike KeBioLM). The MLM head (dense, GELU, LayerNorm, bias) is new and its
decoder is tied to the model's input embeddings, as in BERT.

**At inference the injection is not used**: the saved model is a plain encoder folder (its
transformer after pre-training) that indexes and embeds bare terms like any other, and the
pipelined model fine-tunes it with MS v3 (:mod:`termnorm.training.pipeline`). The paper uses
the injected model the same way, as the start of contrastive fine-tuning and as a term
encoder evaluated on its own. The injector and MLM head weights are written to
``kge_injection/heads.safetensors`` beside the encoder (for inspection or continued
pre-training), and ``objective.json`` (shown on the model card) records the settings, the KGE
and how many training mentions the linker put first.

Implementation: the injection runs as a forward hook on layer i of a BERT-style model
(``model.encoder.layer``); :class:`InjectionObjective` is a
:class:`~termnorm.training.protocols.TokenObjective` (it needs token states, not pooled term
vectors), and :class:`InjectionSource` yields pre-tokenized, masked passages.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from termnorm.encoders.markers import input_embeddings
from termnorm.encoders.prompting import tokenize_prompted
from termnorm.errors import ArtifactMismatchError
from termnorm.kge import KGEVectors
from termnorm.mentions.contexts import Passage, TermDictionary, mention_passages, read_corpus
from termnorm.training.composition import Job, Parts, composition
from termnorm.training.kge_margin import load_margin_kge
from termnorm.training.model_card import OBJECTIVE_CARD_FILE
from termnorm.training.protocols import Encode, TokenObjective

__all__ = [
    "INJECTION_DIR",
    "InjectionBatch",
    "InjectionObjective",
    "InjectionSource",
    "KGEInjector",
    "kge_injection_parts",
    "kge_injection_trainer",
    "transformer_layers",
]

logger = logging.getLogger(__name__)

INJECTION_DIR = "kge_injection"


def transformer_layers(model: nn.Module) -> nn.ModuleList:
    """The layer stack of a BERT-style model (``model.encoder.layer``).

    Raises:
        ArtifactMismatchError: the model has no such stack.
    """
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if not isinstance(layers, nn.ModuleList):
        raise ArtifactMismatchError(
            f"KGE injection needs a BERT-style encoder (model.encoder.layer); "
            f"{type(model).__name__} has none: pass a BERT/MiniLM --base-model"
        )
    return layers


class KGEInjector(nn.Module):
    """Formulas 4–5: mention states → KGE space → linked entities → back into the mention's
    tokens (see the module doc).

    Args:
        hidden: the transformer's state size H.
        entities: the frozen entity vectors ``[E, K]`` (a buffer, never trained).
        candidates: n, the entities the linker mixes per mention.
    """

    entities: torch.Tensor

    def __init__(self, hidden: int, entities: torch.Tensor, candidates: int = 10) -> None:
        super().__init__()
        k = int(entities.shape[1])
        self.proj = nn.Linear(hidden, k)  # W_proj, b_proj
        self.back = nn.Linear(k, hidden)  # KGE space → BERT space
        self.norm = nn.LayerNorm(hidden)
        self.register_buffer("entities", entities.float(), persistent=False)  # [E, K]
        self.candidates = min(candidates, int(entities.shape[0]))

    def forward(
        self, hidden: torch.Tensor, mention_index: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(states [N, T, H], scores [M, E])``: the states with the entity knowledge added
        to the tokens of mentions 0..M-1 (``mention_index`` [N, T]: the mention of each token,
        -1 for none) and renormalised; the linker's scores s_mj of every mention."""
        n, t, h = hidden.shape
        flat = hidden.reshape(n * t, h)  # [NT, H]
        idx = mention_index.reshape(n * t).to(hidden.device)  # [NT]
        where = torch.nonzero(idx >= 0).squeeze(1)  # [P] positions inside mentions
        if where.numel() == 0:
            return hidden, hidden.new_zeros((0, self.entities.shape[0]))
        owner = idx[where]  # [P] mention of each position
        m = int(owner.max()) + 1
        sums = flat.new_zeros((m, h)).index_add(0, owner, flat[where])  # [M, H]
        counts = torch.bincount(owner, minlength=m).clamp(min=1).to(flat.dtype)  # [M]
        h_proj = self.proj(sums / counts.unsqueeze(1))  # [M, K]
        scores = h_proj.float() @ self.entities.T  # [M, E]
        top, cand = scores.topk(self.candidates, dim=1)  # [M, n]
        weights = torch.softmax(top, dim=1)  # [M, n]
        e_m = (weights.unsqueeze(-1) * self.entities[cand]).sum(dim=1)  # [M, K]  (4)
        added = self.norm(flat[where] + self.back(e_m.to(flat.dtype))[owner])  # [P, H]
        out = flat.index_put((where,), added.to(flat.dtype))  # out of place: others unchanged
        return out.view(n, t, h), scores


class MLMHead(nn.Module):
    """BERT's masked-LM head: dense → GELU → LayerNorm → tied decoder (+ bias)."""

    def __init__(self, hidden: int, vocab: int, eps: float = 1e-12) -> None:
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)
        self.bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, states: torch.Tensor, decoder: torch.Tensor) -> torch.Tensor:
        """Logits ``[P, V]`` of states ``[P, H]`` with the input embeddings ``[V, H]``."""
        x = self.norm(nn.functional.gelu(self.dense(states)))
        return nn.functional.linear(x, decoder, self.bias)


@dataclass
class InjectionBatch:
    """Masked, tokenized passages and their mentions."""

    terms: list[str]  # [N] the passages (unmasked)
    tokens: dict[str, torch.Tensor]  # input_ids (masked), attention_mask[, token_type_ids] [N, T]
    mention_index: torch.Tensor  # [N, T] mention of each token, -1 for none
    entity_labels: torch.Tensor  # [M] KGE entity row of each mention, -1 without a vector
    mlm_labels: torch.Tensor  # [N, T] original token at masked positions, -100 elsewhere


class InjectionObjective(TokenObjective):
    """L = L_MLM + L_EL over an :class:`InjectionBatch` (see the module doc).

    Args:
        hidden: the transformer's state size.
        vocab: its vocabulary size.
        kge: the entity vectors (rows in ``kge.concept_ids`` order).
        layer: inject after this layer (1-based).
        candidates: n, entities mixed per mention.
        source: what to record about the KGE in :meth:`save`.
    """

    def __init__(
        self,
        hidden: int,
        vocab: int,
        kge: KGEVectors,
        layer: int,
        candidates: int = 10,
        source: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.layer = layer
        self.injector = KGEInjector(hidden, torch.from_numpy(kge.vectors), candidates)
        self.mlm = MLMHead(hidden, vocab)
        self.source = dict(source or {})
        self.counts = {"mentions": 0, "linked_top1": 0, "labelled": 0}

    def forward_tokens(
        self, model: nn.Module, tokens: dict[str, torch.Tensor], batch: InjectionBatch
    ) -> dict[str, torch.Tensor]:
        """Loss parts ``{"loss", "mlm", "el"}``: runs ``model`` with the injection hooked
        after layer ``self.layer``."""
        layers = transformer_layers(model)
        found: dict[str, torch.Tensor] = {}

        def inject(_module: nn.Module, _inputs: Any, output: Any) -> Any:
            states = output[0] if isinstance(output, tuple) else output
            new, found["scores"] = self.injector(states, batch.mention_index)
            return (new, *output[1:]) if isinstance(output, tuple) else new

        handle = layers[self.layer - 1].register_forward_hook(inject)
        try:
            hidden = model(**tokens).last_hidden_state  # [N, T, H]
        finally:
            handle.remove()
        with torch.autocast(device_type=hidden.device.type, enabled=False):
            labels = batch.mlm_labels.to(hidden.device)
            masked = labels != -100  # [N, T]
            decoder = input_embeddings(model)  # [V, H] (tied, not a head parameter)
            logits = self.mlm(hidden[masked].float(), decoder.float())  # [P, V]
            mlm = nn.functional.cross_entropy(logits, labels[masked])
            scores = found["scores"]  # [M, E]
            targets = batch.entity_labels.to(scores.device)
            known = targets >= 0
            el = (
                nn.functional.cross_entropy(scores[known], targets[known])
                if bool(known.any())
                else scores.sum() * 0.0
            )
            self.counts["mentions"] += int(scores.shape[0])
            self.counts["labelled"] += int(known.sum())
            if bool(known.any()):
                hit = scores[known].argmax(dim=1) == targets[known]
                self.counts["linked_top1"] += int(hit.sum())
        return {"loss": mlm + el, "mlm": mlm, "el": el}

    def save(self, folder: Path) -> None:
        """The injector and MLM head weights (``kge_injection/heads.safetensors``) and
        ``objective.json`` (settings, KGE, linking counts; the model card shows it)."""
        from safetensors.torch import save_file

        out = Path(folder) / INJECTION_DIR
        out.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()}
        save_file(state, str(out / "heads.safetensors"))
        record = {
            "objective": "kge-inject",
            "used_at_inference": False,
            "layer": self.layer,
            "candidates": self.injector.candidates,
            **self.source,
            **{f"train_{k}": v for k, v in self.counts.items()},
        }
        (Path(folder) / OBJECTIVE_CARD_FILE).write_text(json.dumps(record, indent=2) + "\n")


class InjectionSource:
    """Counter-based batches of masked passages (see the module doc).

    Args:
        passages: passages with their dictionary matches.
        tokenizer: the encoder's (fast) tokenizer.
        entity_row: concept ID → KGE entity row.
        length: max tokens per passage.
        per_batch: passages per batch.
        mlm_probability: share of tokens drawn for masking.
        seed: base seed.
        prompt: the encoder folder's default prompt, put before every passage (its tokens
            are never a mention's nor masked; offsets stay the passage's).
    """

    def __init__(
        self,
        passages: Sequence[Passage],
        tokenizer: Any,
        entity_row: dict[str, int],
        length: int = 96,
        per_batch: int = 6,
        mlm_probability: float = 0.15,
        seed: int = 0,
        prompt: str = "",
    ) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise ArtifactMismatchError(
                "KGE injection maps mentions to tokens through a fast tokenizer's offsets; "
                "this model has a slow one: save it with a tokenizer.json"
            )
        self.tokenizer = tokenizer
        self.per_batch, self.p, self.seed = per_batch, mlm_probability, seed
        self.mask_id = int(tokenizer.mask_token_id)
        self.vocab = len(tokenizer)
        enc = tokenize_prompted(
            tokenizer,
            [p.text for p in passages],
            prompt,
            truncation=True,
            max_length=length,
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
        )
        self.items: list[dict[str, Any]] = []
        dropped = 0
        for i, passage in enumerate(passages):
            offsets = enc["offset_mapping"][i]
            owner = np.full(len(offsets), -1, dtype=np.int64)  # token → mention of the passage
            labels: list[int] = []
            for span in passage.spans:
                inside = [
                    t
                    for t, (s, e) in enumerate(offsets)
                    if e > s and s < span.end and e > span.start and owner[t] < 0
                ]
                if not inside:  # truncated away
                    dropped += 1
                    continue
                owner[inside] = len(labels)
                labels.append(entity_row.get(span.concept_id, -1))
            if labels:
                item = {k: np.asarray(enc[k][i]) for k in enc if k != "offset_mapping"}
                self.items.append({**item, "owner": owner, "labels": labels, "text": passage.text})
        if len(self.items) < per_batch:
            raise ValueError(
                f"KGE injection needs at least {per_batch} passages with a KG term, the corpus "
                f"has {len(self.items)}: pass a larger --corpus or lower --passages-per-batch"
            )
        self.dropped_mentions = dropped

    def batch(self, step: int, shard: int = 0) -> InjectionBatch:
        """``per_batch`` passages, padded, masked (whole mentions), deterministic."""
        rng = np.random.default_rng([self.seed, step, shard])
        chosen = [
            self.items[int(i)] for i in rng.choice(len(self.items), self.per_batch, replace=False)
        ]
        width = max(len(it["input_ids"]) for it in chosen)
        n = len(chosen)
        ids = np.full((n, width), self.tokenizer.pad_token_id, dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        owner = np.full((n, width), -1, dtype=np.int64)
        mlm = np.full((n, width), -100, dtype=np.int64)
        labels: list[int] = []
        for r, it in enumerate(chosen):
            size = len(it["input_ids"])
            ids[r, :size] = it["input_ids"]
            mask[r, :size] = 1
            if "token_type_ids" in it:
                types[r, :size] = it["token_type_ids"]
            own = it["owner"]
            owner[r, :size] = np.where(own >= 0, own + len(labels), -1)
            labels += it["labels"]
            drawn = (rng.random(size) < self.p) & (it["special_tokens_mask"] == 0)
            for mention in np.unique(own[drawn & (own >= 0)]):  # whole-entity masking
                drawn |= own == mention
            if not drawn.any():  # every passage predicts at least one token
                drawn[int(rng.choice(np.flatnonzero(it["special_tokens_mask"] == 0)))] = True
            mlm[r, :size][drawn] = ids[r, :size][drawn]
            roll = rng.random(size)
            ids[r, :size][drawn & (roll < 0.8)] = self.mask_id
            swap = drawn & (roll >= 0.8) & (roll < 0.9)
            ids[r, :size][swap] = rng.integers(self.vocab, size=int(swap.sum()))
        tokens = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}
        if "token_type_ids" in chosen[0]:
            tokens["token_type_ids"] = torch.from_numpy(types)
        return InjectionBatch(
            terms=[it["text"] for it in chosen],
            tokens=tokens,
            mention_index=torch.from_numpy(owner),
            entity_labels=torch.tensor(labels, dtype=torch.long),
            mlm_labels=torch.from_numpy(mlm),
        )

    def before_step(self, step: int, encode: Encode) -> None:
        """Nothing to refresh: the passages do not follow the model."""

    def state_dict(self) -> dict[str, Any]:
        """The seed (batches depend on it and the step only)."""
        return {"seed": self.seed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.seed = int(state["seed"])

    def stats(self) -> dict[str, int]:
        """Counts for the model card."""
        return {
            "passages": len(self.items),
            "mentions": sum(len(it["labels"]) for it in self.items),
            "mentions_with_kge_vector": sum(
                sum(lab >= 0 for lab in it["labels"]) for it in self.items
            ),
            "mentions_truncated": self.dropped_mentions,
        }


def kge_injection_parts(job: Job) -> Parts:
    """The parts of ``--loss kge-inject``: masked corpus passages + L_MLM + L_EL.

    Raises:
        ValueError: an ``--inject-layer`` outside the model's layers, too few passages.
        termnorm.errors.ArtifactMismatchError: a KGE trained on another KG, a model without
            a BERT-style layer stack.
    """
    config, kg = job.config, job.kg
    config.validate()
    kge = load_margin_kge(config, kg)
    documents = read_corpus(config.corpus, config.corpus_format)
    dictionary = TermDictionary.from_kg(kg)
    passages = mention_passages(
        documents, dictionary, max_words=config.injection.passage_length // 2
    )
    encoder = job.encoder()[0]
    n_layers = len(transformer_layers(encoder.model))
    if not 1 <= config.injection.inject_layer < n_layers:
        raise ValueError(
            f"--inject-layer must be in [1, {n_layers - 1}] for this {n_layers}-layer model "
            f"(got {config.injection.inject_layer}): the injected states go on through the layers above"
        )
    row = {cid: i for i, cid in enumerate(kge.concept_ids)}
    source = InjectionSource(
        passages,
        encoder.tokenizer,
        row,
        config.injection.passage_length,
        config.injection.passages_per_batch,
        config.injection.mlm_probability,
        config.seed,
        encoder.prompt,
    )
    objective = InjectionObjective(
        int(encoder.model.config.hidden_size),
        int(input_embeddings(encoder.model).shape[0]),
        kge,
        config.injection.inject_layer,
        config.injection.inject_candidates,
        source={
            "kge": str(config.kge),
            "kge_model": kge.card.get("config", {}).get("model"),
            "kge_dim": kge.dim,
        },
    )
    logger.info("KGE injection: %s (dictionary %s)", source.stats(), dictionary.counts)
    return Parts(source, objective)


kge_injection_trainer = composition(kge_injection_parts)
