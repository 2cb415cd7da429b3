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
    ],
)
def test_bad_values_are_refused(changes: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KGEConfig(**changes)  # type: ignore[arg-type]


def test_an_unknown_model_is_refused() -> None:
    with pytest.raises(ValueError, match="'distmult' is not a valid KGEModelKind"):
        KGEConfig(model="distmult")  # type: ignore[arg-type]
