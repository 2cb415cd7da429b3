"""A ranker's ``threads`` hold only while it scores: loading one, or scoring with it, leaves
torch's thread count of the process as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import termnorm
from termnorm.encoders.forward import torch_threads
from termnorm.search.candidate import Candidate
from termnorm.search.rank import KeywordCrossEncoder, save_ranker


@pytest.fixture()
def ranker_folder(tiny_bert_path: Path, tmp_path: Path) -> Path:
    model = KeywordCrossEncoder.from_pretrained(tiny_bert_path, plain=True, max_length=32)
    return save_ranker(model, {}, tmp_path / "ranker")


def test_load_ranker_scopes_its_threads_to_scoring(
    ranker_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = torch.get_num_threads()
    wanted = 2 if before == 1 else 1
    ranker = termnorm.load_ranker(ranker_folder, threads=wanted)
    assert torch.get_num_threads() == before
    seen: list[int] = []
    predict = ranker.model.predict

    def spy(*args: Any, **kwargs: Any) -> torch.Tensor:
        seen.append(torch.get_num_threads())
        return predict(*args, **kwargs)

    monkeypatch.setattr(ranker.model, "predict", spy)
    candidate = Candidate("T:0001", "myocardial infarction", 0.9, "heart attack", 1)
    assert ranker.score("heart attack", [candidate]).shape == (1,)
    assert seen == [wanted]
    assert torch.get_num_threads() == before


def test_load_ranker_refuses_threads_below_one(ranker_folder: Path) -> None:
    with pytest.raises(ValueError, match="--threads must be at least 1, not 0"):
        termnorm.load_ranker(ranker_folder, threads=0)


def test_torch_threads_restores_after_nested_blocks_and_errors() -> None:
    before = torch.get_num_threads()
    other = before + 1
    with torch_threads(other):
        with torch_threads(1):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == other
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError, match="boom"), torch_threads(other):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
