"""CoderModel: the loss parts are computed in float32 even under bf16 autocast."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from termnorm.encoders import TermEncoder
from termnorm.kg import KnowledgeGraph
from termnorm.losses import MultiSimilarityLoss
from termnorm.training import KGSampler, TrainConfig
from termnorm.training.objective import CoderModel


@pytest.mark.parametrize("loss", ["ms", "coder"])
def test_losses_run_in_float32_under_bf16_autocast(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path, loss: str
) -> None:
    encoder = TermEncoder.load(tiny_bert_path, device="cpu", max_length=16)
    config = TrainConfig.from_dict({"out": tmp_path / "m", "loss": loss, "k": 16, "m": 2})
    sampler = KGSampler(tiny_kg, k=16, m=2, synonym_share=0.5, seed=5)
    model = CoderModel(encoder.model, encoder.pooling, config, sampler.relation_labels).eval()
    batch = sampler.batch(0)
    tokens = encoder.tokenize(batch.terms)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        parts = model(tokens, batch)
        emb = model.embed(tokens).float()  # the same bf16 encoder output
    with torch.no_grad():
        expected = MultiSimilarityLoss()(emb, batch.labels)
    assert parts["ms"].dtype == torch.float32
    assert parts["ms"].item() == pytest.approx(expected.item(), rel=1e-6, abs=1e-7)
    if loss == "coder":
        assert parts["rel"].dtype == torch.float32
