"""CoderObjective: the loss parts are computed in float32 even under bf16 autocast."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from termnorm.encoders import TermEncoder
from termnorm.encoders.pooling import pool
from termnorm.kg import KnowledgeGraph
from termnorm.losses import MultiSimilarityLoss
from termnorm.training import CoderObjective, KGSampler, TrainConfig


@pytest.mark.parametrize("loss", ["ms", "coder"])
def test_losses_run_in_float32_under_bf16_autocast(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path, loss: str
) -> None:
    encoder = TermEncoder.load(tiny_bert_path, device="cpu", max_length=16)
    config = TrainConfig.from_dict({"out": tmp_path / "m", "loss": loss, "k": 16, "m": 2})
    sampler = KGSampler(tiny_kg, k=16, m=2, synonym_share=0.5, seed=5)
    objective = CoderObjective(32, config, sampler.relation_labels)
    encoder.model.eval()
    batch = sampler.batch(0)
    tokens = encoder.tokenize(batch.terms)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        hidden = encoder.model(**tokens).last_hidden_state
        emb = pool(hidden, tokens["attention_mask"], encoder.pooling).float()  # bf16 encoder
        parts = objective(emb, batch)
    with torch.no_grad():
        expected = MultiSimilarityLoss()(emb, batch.labels)
    assert parts["ms"].dtype == torch.float32
    assert parts["ms"].item() == pytest.approx(expected.item(), rel=1e-6, abs=1e-7)
    if loss == "coder":
        assert parts["rel"].dtype == torch.float32
