"""KGE job settings: the paper's split by default, bad values refused with the field named."""

from __future__ import annotations

import pytest

from termnorm.kge import KGEConfig, KGEModelKind


def test_defaults_are_the_papers_split_and_model_names_resolve_in_pykeen_terms() -> None:
    config = KGEConfig(model="complex")  # type: ignore[arg-type]
    assert config.model is KGEModelKind.COMPLEX
    assert (config.valid_fraction, config.test_fraction) == (0.04, 0.06)
    assert config.train_fraction == pytest.approx(0.90)
    assert [k.pykeen_name for k in KGEModelKind] == ["TransE", "ComplEx", "RotatE", "SimplE"]
    assert config.to_card()["model"] == "complex"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"dim": 0}, "dim must be at least 1"),
        ({"epochs": 0}, "epochs must be at least 1"),
        ({"lr": 0.0}, "lr must be positive"),
        ({"test_fraction": 0.5}, r"test_fraction must be in \(0, 0.5\)"),
        ({"valid_fraction": 0.0}, r"valid_fraction must be in \(0, 0.5\)"),
        ({"eval_max_triples": 0}, "eval_max_triples must be at least 1"),
        ({"negatives": 0}, "negatives must be at least 1"),
        ({"patience": 0}, "patience must be at least 1"),
        ({"valid_max_triples": 0}, "valid_max_triples must be at least 1"),
    ],
)
def test_bad_values_are_refused(changes: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KGEConfig(**changes)  # type: ignore[arg-type]


def test_an_unknown_model_is_refused() -> None:
    with pytest.raises(ValueError, match="'distmult' is not a valid KGEModelKind"):
        KGEConfig(model="distmult")  # type: ignore[arg-type]


def test_each_model_trains_with_its_recipe_unless_overridden() -> None:
    from termnorm.kge.recipes import RECIPES, batch_size, negatives, pipeline_arguments

    complex_ = pipeline_arguments(KGEConfig(model=KGEModelKind.COMPLEX))
    assert complex_["model_kwargs"]["entity_initializer"] == "xavier_normal"  # not N(0, 1)
    assert complex_["model_kwargs"]["regularizer"] is None
    # ComplEx scores every entity (1-N), the distance models sample negatives
    assert RECIPES[KGEModelKind.COMPLEX].negatives is None
    assert complex_["training_loop"] == "LCWA" and "negative_sampler" not in complex_
    assert all(r.negatives is None or r.negatives > 1 for r in RECIPES.values())
    rotate = pipeline_arguments(KGEConfig(model=KGEModelKind.ROTATE))
    assert rotate["training_loop"] == "sLCWA"
    assert rotate["negative_sampler_kwargs"]["num_negs_per_pos"] == 32
    own = pipeline_arguments(KGEConfig(model=KGEModelKind.SIMPLE, lr=0.5, negatives=3, dim=7))
    assert own["optimizer_kwargs"] == {"lr": 0.5}
    assert own["negative_sampler_kwargs"] == {"num_negs_per_pos": 3}
    assert own["model_kwargs"]["embedding_dim"] == 7 and own["model_kwargs"]["clamp_score"] == 20
    # --negatives turns a 1-N recipe back into sLCWA; --batch-size overrides the recipe's
    sampled = KGEConfig(model=KGEModelKind.COMPLEX, negatives=4, batch_size=99)
    assert pipeline_arguments(sampled)["training_loop"] == "sLCWA"
    assert negatives(sampled) == 4 and batch_size(sampled) == 99
    assert batch_size(KGEConfig(model=KGEModelKind.COMPLEX)) == 256
    assert batch_size(KGEConfig(model=KGEModelKind.TRANSE)) == 1024
