"""Each model's default recipe learns: on chains with an inverse relation (every held-out edge
is implied by its inverse in training) the defaults reach a high filtered MRR in seconds, where
a random ranking of 120 entities gives about 0.04; early stopping ends the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from _kge_fixtures import save_chain_kg
from termnorm.kge import KGEConfig, KGEModelKind, train_kge

pytest.importorskip("pykeen")


@pytest.fixture(scope="module")
def chain_kg_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_chain_kg(tmp_path_factory.mktemp("chains") / "kg")


@pytest.mark.parametrize("model", list(KGEModelKind))
def test_the_defaults_learn_the_inverse_relation(
    model: KGEModelKind, chain_kg_dir: Path, tmp_path: Path
) -> None:
    # the defaults (recipe, early stopping), with batches, vectors and patience sized for
    # 220 triples: 3-15 s per model on a shared CPU
    config = KGEConfig(
        model=model,
        dim=32,
        batch_size=64,
        valid_fraction=0.1,
        test_fraction=0.2,
        patience=1,
        progress=False,
    )
    kge = train_kge(chain_kg_dir, config, tmp_path / "kge")
    card = kge.card
    assert card["split"]["sizes"]["test"] >= 40
    assert card["metrics"]["linkpred_mrr"] > 0.3, card["metrics"]  # random: about 0.04
    assert card["metrics"]["linkpred_hits@10"] > 0.6
    early = card["early_stopping"]
    assert early["stopped_early"] and early["epochs_run"] < config.epochs
    assert early["best_epoch"] in [e["epoch"] for e in early["evaluations"]]
    training = card["training"]
    if model is KGEModelKind.COMPLEX:  # 1-N: every entity is a negative, heads via r⁻¹
        assert training["training_loop"] == "LCWA" and training["reciprocal_relations"]
        assert kge.relation_vectors.shape[0] == len(kge.relation_labels)  # r⁻¹ rows dropped
    else:
        assert training["training_loop"] == "sLCWA" and training["negatives"] > 1
