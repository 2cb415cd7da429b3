"""KGE injection (formulas 4–6): only mention tokens change, whole-entity masking, the
refusals, and the pipelined model (injection pre-training → MS v3) end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from _context_fixtures import write_corpus
from _kge_fixtures import save_cluster_kg
from termnorm.encoders import TermEncoder
from termnorm.kg import KnowledgeGraph
from termnorm.kge import KGEVectors
from termnorm.mentions.contexts import MatchedSpan, Passage
from termnorm.training import (
    InjectionObjective,
    InjectionSource,
    KGEInjector,
    TrainConfig,
    pipelined_training,
)


def test_injection_changes_only_the_mention_tokens() -> None:
    torch.manual_seed(0)
    entities = torch.randn(7, 5)
    injector = KGEInjector(hidden=8, entities=entities, candidates=3)
    hidden = torch.randn(2, 6, 8)
    index = torch.full((2, 6), -1)
    index[0, 1:3] = 0  # mention 0: tokens 1-2 of row 0
    index[1, 4] = 1  # mention 1: token 4 of row 1
    out, scores = injector(hidden, index)
    changed = (out - hidden).abs().sum(-1) > 1e-6  # [2, 6]
    assert torch.equal(changed, index >= 0)
    assert scores.shape == (2, 7)
    # formula 4 by hand for mention 0: softmax over the 3 best entities of h_proj · e
    h_proj = injector.proj(hidden[0, 1:3].mean(0))
    top, cand = (h_proj @ entities.T).topk(3)
    e_m = (torch.softmax(top, 0).unsqueeze(1) * entities[cand]).sum(0)
    expected = injector.norm(hidden[0, 1:3] + injector.back(e_m))
    assert torch.allclose(out[0, 1:3], expected, atol=1e-5)
    same, none = injector(hidden, torch.full((2, 6), -1))
    assert torch.equal(same, hidden) and none.shape == (0, 7)


def test_the_hook_changes_only_mention_tokens_at_the_injected_layer(tiny_bert_path: Path) -> None:
    encoder = TermEncoder.load(tiny_bert_path, device="cpu", max_length=32)
    model = encoder.model.eval()
    kge = KGEVectors(
        ["A", "B", "C"],
        np.random.default_rng(0).normal(size=(3, 4)).astype("float32"),
        [],
        np.zeros((0, 4), "float32"),
    )
    objective = InjectionObjective(32, len(encoder.tokenizer), kge, layer=1, candidates=2)
    tokens = encoder.tokenize(["ab cd", "efgh"])
    index = torch.full(tokens["input_ids"].shape, -1)
    index[0, 1:3] = 0
    seen: list[torch.Tensor] = []
    layer = model.encoder.layer[0]
    probe = layer.register_forward_hook(
        lambda _m, _i, out: seen.append((out[0] if isinstance(out, tuple) else out).clone())
    )
    with torch.no_grad():
        model(**tokens)  # plain
        handle = layer.register_forward_hook(
            lambda _m, _i, out: objective.injector(
                out[0] if isinstance(out, tuple) else out, index
            )[0]
        )
        model(**tokens)  # injected (the probe runs first: it sees the layer's own output)
        handle.remove()
    probe.remove()
    assert torch.equal(seen[0], seen[1])  # the layer itself is untouched
    injected = objective.injector(seen[0], index)[0]
    changed = (injected - seen[0]).abs().sum(-1) > 1e-6
    assert torch.equal(changed, index >= 0)


def passages() -> list[Passage]:
    text = "the lung problem 1 and skin disorder 2 were seen"
    spans = []
    for term, cid in (("lung problem 1", "L"), ("skin disorder 2", "S")):
        start = text.index(term)
        spans.append(MatchedSpan(start, start + len(term), cid, term))
    return [
        Passage(text, tuple(spans)),
        Passage("no skin disorder 2 here", (MatchedSpan(3, 18, "S", "skin disorder 2"),)),
    ]


def test_source_masks_whole_mentions_and_labels_entities(tiny_bert_path: Path) -> None:
    encoder = TermEncoder.load(tiny_bert_path, device="cpu")
    src = InjectionSource(
        passages(), encoder.tokenizer, {"S": 4}, length=64, per_batch=2, mlm_probability=0.3, seed=1
    )
    assert src.stats() == {
        "passages": 2,
        "mentions": 3,
        "mentions_with_kge_vector": 2,
        "mentions_truncated": 0,
    }
    for step in range(10):
        b = src.batch(step)
        masked = b.mlm_labels != -100
        assert masked.any(dim=1).all()  # every passage predicts something
        for m in range(int(b.mention_index.max()) + 1):
            inside = b.mention_index == m
            assert bool(masked[inside].all()) or not bool(masked[inside].any())  # whole entity
        original = b.mlm_labels[masked]
        assert (
            b.tokens["input_ids"][masked] == encoder.tokenizer.mask_token_id
        ).float().mean() > 0.5
        assert (original != encoder.tokenizer.mask_token_id).all()
        assert sorted(b.entity_labels.tolist()) in ([-1, 4, 4],)
    n_tokens = len(encoder.tokenizer("lung problem 1")["input_ids"]) - 2
    row = next(i for i, t in enumerate(b.terms) if t.startswith("the lung"))
    first = int(b.mention_index[row][b.mention_index[row] >= 0].min())
    assert int((b.mention_index[row] == first).sum()) == n_tokens


def test_injection_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--loss kge-inject needs --kge KGE"):
        TrainConfig(out=tmp_path, loss="kge-inject").validate()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="--loss kge-inject needs --corpus FILE"):
        TrainConfig(out=tmp_path, loss="kge-inject", kge=tmp_path).validate()  # type: ignore[arg-type]


def test_pipelined_injection_then_ms_v3_end_to_end(tiny_bert_path: Path, tmp_path: Path) -> None:
    pytest.importorskip("pykeen")
    pytest.importorskip("faiss")
    from termnorm.kge import KGEConfig, train_kge

    kg_dir = save_cluster_kg(tmp_path / "kg")
    kg = KnowledgeGraph.load(kg_dir)
    kge = tmp_path / "kge"
    train_kge(kg_dir, KGEConfig(model="transe", dim=8, epochs=1), kge)  # type: ignore[arg-type]
    corpus = write_corpus(tmp_path)
    common = dict(kg=kg_dir, kge=kge, corpus=(str(corpus),), corpus_format="text", steps=2)
    common |= dict(warmup=1, log_every=1, precision="fp32", device="cpu", freeze_layers=0)
    common |= dict(freeze_embeddings=False, base_model=tiny_bert_path)
    inject = TrainConfig.from_dict(
        {
            **common,
            "out": tmp_path / "inj",
            "loss": "kge-inject",
            "inject_layer": 1,
            "passage_length": 60,
            "passages_per_batch": 2,
        }
    )
    finetune = TrainConfig.from_dict(
        {
            **common,
            "out": tmp_path / "pipe",
            "loss": "ms-v3",
            "batches": "prototype",
            "prototypes": 3,
            "prototype_positives": 2,
            "prototype_negatives": 2,
            "context_words": 2,
            "max_length": 48,
            "base_model": None,
        }
    )
    too_high = TrainConfig.from_dict({**inject.to_dict(), "inject_layer": 2})
    with pytest.raises(ValueError, match=r"--inject-layer must be in \[1, 1\] for this 2-layer"):
        pipelined_training(too_high, finetune, kg)
    first, second = pipelined_training(inject, finetune, kg)
    assert (first.out, second.out) == (tmp_path / "inj", tmp_path / "pipe")
    log = [json.loads(x) for x in (tmp_path / "inj" / "train_log.jsonl").read_text().splitlines()]
    assert [set(r) >= {"mlm", "el"} and math.isfinite(r["loss"]) for r in log if "loss" in r] == [
        True,
        True,
    ]
    card = json.loads((tmp_path / "inj" / "objective.json").read_text())
    assert card["used_at_inference"] is False and card["layer"] == 1 and card["train_labelled"] > 0
    assert (tmp_path / "inj" / "kge_injection" / "heads.safetensors").is_file()
    assert "| used_at_inference | `False` |" in (tmp_path / "inj" / "README.md").read_text()
    config = json.loads((tmp_path / "pipe" / "training_config.json").read_text())
    assert config["base_model"] == str(tmp_path / "inj")
    for folder in ("inj", "pipe"):  # both are plain encoder folders
        vectors = TermEncoder.load(tmp_path / folder, device="cpu").encode(["lung problem 1"])
        assert vectors.shape == (1, 32) and np.isfinite(vectors).all()
