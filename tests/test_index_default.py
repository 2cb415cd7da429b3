"""The default index in the user cache: built once, and rebuilt (with a warning, not an error)
when the cached folder is of another index format or was built with another model."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import make_tiny_kg
from termnorm.errors import NotWritableError
from termnorm.index import default
from termnorm.index.term_index import CARD_NAME, FORMAT_VERSION
from termnorm.kg import KnowledgeGraph
from test_not_writable import read_only


@pytest.fixture()
def builds(monkeypatch: pytest.MonkeyPatch, tiny_bert_path: Path, tmp_path: Path) -> list[int]:
    """The default index over the tiny KG and BERT in a private cache; counts the builds."""
    built: list[int] = []

    def tiny_default_kg() -> KnowledgeGraph:
        built.append(1)
        return make_tiny_kg()

    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(default, "default_kg", tiny_default_kg)
    monkeypatch.setattr(default, "default_model_path", lambda: tiny_bert_path)
    return built


def _edit_card(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    card = json.loads((folder / CARD_NAME).read_text())
    change(card)
    (folder / CARD_NAME).write_text(json.dumps(card))


def test_built_once_then_reused(builds: list[int]) -> None:
    folder = default.default_index_folder(show_progress=False)
    assert folder == default.default_index_dir() and builds == [1]
    assert default.default_index(show_progress=False).path == folder
    assert builds == [1]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda c: c.update(format_version=FORMAT_VERSION - 1), "index format"),
        (lambda c: c["model"].update(fingerprint="an-older-hash"), "an-older-hash"),
    ],
)
def test_a_stale_cached_index_is_rebuilt(
    builds: list[int],
    change: Callable[[dict[str, Any]], None],
    reason: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    folder = default.default_index_folder(show_progress=False)
    _edit_card(folder, change)
    with caplog.at_level(logging.WARNING, logger=default.__name__):
        index = default.default_index(show_progress=False)
    assert builds == [1, 1]
    assert "is stale" in caplog.text and reason in caplog.text
    assert index.card["format_version"] == FORMAT_VERSION
    assert default.default_index_folder(show_progress=False) == folder and builds == [1, 1]


def test_built_with_int8_where_it_passes_its_check(builds: list[int]) -> None:
    card = json.loads((default.default_index_folder(show_progress=False) / CARD_NAME).read_text())
    assert card["model"]["runtime"] == "onnx-int8"
    assert card["model"]["runtime_cosine"] >= 0.995
    assert card["model"]["int8_kernel"] in {"u8s8", "u8u8", "u8s8-7bit"}


def test_an_int8_runtime_failing_its_check_builds_with_torch(
    builds: list[int], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from termnorm.encoders import transformer
    from termnorm.encoders.fidelity import RuntimeFidelityError

    def refuse(*args: object) -> float:
        raise RuntimeFidelityError("--runtime onnx-int8 gives vectors with cosine 0.9068")

    monkeypatch.setattr(transformer, "check_fidelity", refuse)
    with caplog.at_level(logging.WARNING):
        folder = default.default_index_folder(show_progress=False)
    assert json.loads((folder / CARD_NAME).read_text())["model"]["runtime"] == "torch"
    assert "building the default index with torch fp32, not onnx-int8" in caplog.text
    assert "0.9068" in caplog.text


def test_the_card_names_the_kg_fingerprint(builds: list[int], tmp_path: Path) -> None:
    # built from a KG in memory: the card has the fingerprint the saved KG would have
    card = json.loads((default.default_index_folder(show_progress=False) / CARD_NAME).read_text())
    saved = make_tiny_kg().save(tmp_path / "kg")
    assert card["kg"]["fingerprint"] == KnowledgeGraph.load(saved).fingerprint != ""


def test_the_default_index_is_refused_before_it_is_built(
    builds: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "ro" / "cache"))
    (tmp_path / "ro").mkdir()
    read_only(monkeypatch, tmp_path / "ro")
    with pytest.raises(
        NotWritableError, match=r"default-index-.*set TERMNORM_CACHE to a writable folder"
    ):
        default.default_index_folder(show_progress=False)
    assert builds == []  # no KG built, nothing encoded


def test_the_build_runs_on_one_thread_and_leaves_torch_as_it_was(
    builds: list[int], tiny_bert_path: Path
) -> None:
    """One intra-op thread encodes the most texts per CPU-second (module constant's note)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        encoder = default._build_encoder()
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    options = encoder._forward.session.get_session_options()  # type: ignore[attr-defined]
    assert options.intra_op_num_threads == default.BUILD_THREADS == 1
