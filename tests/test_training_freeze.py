"""Partial freezing (``--freeze-embeddings``, ``--freeze-layers``) and the recipe defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import AutoModel

from termnorm.training.config import LossKind, TrainConfig
from termnorm.training.optim import freeze


def _count(params: object) -> int:
    return sum(p.numel() for p in params)  # type: ignore[attr-defined]


def test_freeze_counts_and_stops_exactly_the_named_parts(tiny_bert_path: Path) -> None:
    model = AutoModel.from_pretrained(tiny_bert_path)
    n_emb = _count(model.embeddings.parameters())
    n_layer0 = _count(model.encoder.layer[0].parameters())
    assert freeze(model, embeddings=True, layers=1) == n_emb + n_layer0
    assert not any(p.requires_grad for p in model.embeddings.parameters())
    assert not any(p.requires_grad for p in model.encoder.layer[0].parameters())
    assert all(p.requires_grad for p in model.encoder.layer[1].parameters())


def test_freezing_everything_fails_with_advice(tiny_bert_path: Path) -> None:
    model = AutoModel.from_pretrained(tiny_bert_path)  # 2 transformer layers
    with pytest.raises(ValueError, match="lower --freeze-layers"):
        freeze(model, embeddings=True, layers=2)
    with pytest.raises(ValueError, match="exceeds the model's 2 layers"):
        freeze(model, embeddings=False, layers=3)
    assert freeze(model, embeddings=False, layers=2) > 0  # embeddings still train


def test_defaults_are_the_recommended_cpu_recipe() -> None:
    """``docs/results/training.md`` states this recipe; `termnorm train --kg --out` must run it."""
    c = TrainConfig()
    assert c.loss is LossKind.MS
    assert (c.steps, c.k, c.sampler.m, c.sampler.synonym_share, c.lr) == (1500, 64, 2, 0.75, 5e-5)
    assert (c.freeze_embeddings, c.freeze_layers, c.max_length) == (True, 2, 24)
    assert c.sampler.hard_negatives and (c.sampler.hard_share, c.sampler.hard_refresh) == (
        0.75,
        250,
    )
    assert c.train_data == "o" and c.sampler.domain_share == 0.5  # docs: --train-data od recipe
    assert not c.uses_domain_groups and TrainConfig(train_data="od").uses_domain_groups
