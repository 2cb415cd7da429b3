"""Weight averages of fine-tuned encoders: soups and WiSE-FT (``encoders.interpolation``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from termnorm.encoders.interpolation import (
    FINETUNED_FILE,
    WEIGHTS_FILE,
    average_weights,
    soup,
    wise_ft_in_place,
)
from termnorm.kg import KnowledgeGraph
from termnorm.training import build_trainer
from test_training_run import _config


def _folder(path: Path, value: float, extra: bool = False) -> Path:
    path.mkdir(parents=True)
    state = {"w": torch.full((2, 3), value), "b": torch.full((3,), 2 * value)}
    if extra:  # a buffer only the base has, like embeddings.position_ids
        state["position_ids"] = torch.arange(4)
    save_file(state, str(path / WEIGHTS_FILE))
    (path / "config.json").write_text("{}")
    return path


def test_average_weights_is_the_weighted_sum() -> None:
    a = {"w": torch.tensor([1.0, 2.0])}
    b = {"w": torch.tensor([3.0, 6.0]), "extra": torch.zeros(1)}
    mixed = average_weights([a, b], [0.75, 0.25], ["a", "b"])
    assert list(mixed) == ["w"]
    assert torch.allclose(mixed["w"], torch.tensor([1.5, 3.0]))


def test_average_weights_refuses_other_bases_and_bad_weights() -> None:
    a = {"w": torch.zeros(2)}
    with pytest.raises(ValueError, match="fine-tuned from one base"):
        average_weights([a, {"w": torch.zeros(3)}], [0.5, 0.5], ["a", "b"])
    with pytest.raises(ValueError, match="summing to 1"):
        average_weights([a, a], [0.5, 0.6], ["a", "b"])
    with pytest.raises(ValueError, match="at least two"):
        average_weights([a], [1.0], ["a"])


def test_soup_writes_the_first_folder_with_mixed_weights(tmp_path: Path) -> None:
    m1, m2, m3 = (_folder(tmp_path / f"m{i}", float(i)) for i in (1, 2, 6))
    soup(tmp_path / "out", [m1, m2, m3])
    state = load_file(str(tmp_path / "out" / WEIGHTS_FILE))
    assert torch.allclose(state["w"], torch.full((2, 3), 3.0))
    assert (tmp_path / "out" / "config.json").is_file()
    with pytest.raises(FileNotFoundError, match=WEIGHTS_FILE):
        soup(tmp_path / "bad", [m1, tmp_path])


def test_wise_ft_mixes_from_the_kept_fine_tuned_weights(tmp_path: Path) -> None:
    model, base = _folder(tmp_path / "ft", 4.0), _folder(tmp_path / "base", 0.0, extra=True)
    wise_ft_in_place(model, base, 0.75)
    assert torch.allclose(load_file(str(model / WEIGHTS_FILE))["w"], torch.full((2, 3), 3.0))
    assert torch.allclose(load_file(str(model / FINETUNED_FILE))["w"], torch.full((2, 3), 4.0))
    wise_ft_in_place(model, base, 0.5)  # from the fine-tuned weights, not from the 0.75 mix
    assert torch.allclose(load_file(str(model / WEIGHTS_FILE))["b"], torch.full((3,), 4.0))
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
        wise_ft_in_place(model, base, 0.0)


def test_train_with_wise_alpha_saves_the_mix_and_says_so(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    out = tmp_path / "model"
    build_trainer(_config(tiny_bert_path, out, steps=3, loss="ms", wise_alpha=0.5), tiny_kg).train()
    saved = load_file(str(out / WEIGHTS_FILE))
    trained = load_file(str(out / FINETUNED_FILE))
    base = load_file(str(tiny_bert_path / WEIGHTS_FILE))
    key = "encoder.layer.0.attention.self.query.weight"
    assert not torch.equal(trained[key], base[key])  # training moved it
    assert torch.allclose(saved[key], 0.5 * trained[key] + 0.5 * base[key], atol=1e-6)
    card = (out / "README.md").read_text()
    assert "WiSE-FT: 0.5 × trained + 0.5 × the base model" in card
    with pytest.raises(ValueError, match="--wise-alpha"):
        _config(tiny_bert_path, out, wise_alpha=1.5).validate()
