"""``--runtime`` / ``--threads`` on ``index build`` and ``normalize``, and ``runtime=`` in the
API: the card records the runtime, an index is queried with another runtime of its model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from termnorm import api
from termnorm.encoders import forward as forward_mod
from test_normalize_cli import fresh_api, run

__all__ = ["fresh_api"]  # the autouse fixture: a clean API cache and TERMNORM_CACHE per test


@pytest.fixture()
def onnx_index(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Path:
    model = Path(shutil.copytree(tiny_bert_path, tmp_path / "bert"))
    out = tmp_path / "idx"
    code, _, err = run(
        [
            "index",
            "build",
            "--kg",
            str(tiny_kg_dir),
            "--model",
            str(model),
            "--out",
            str(out),
            "--backend",
            "exact",
            "--memory-budget",
            "1GB",
            "--runtime",
            "onnx",
            "--threads",
            "1",
        ],
        capsys,
    )
    assert code == 0, err
    return out


def _top(out: str) -> list[tuple[str, float]]:
    return [
        (row["candidates"][0]["concept_id"], row["candidates"][0]["score"])
        for row in json.loads(out)
    ]


def test_index_card_records_the_runtime(onnx_index: Path) -> None:
    card = json.loads((onnx_index / "index.json").read_text())
    assert card["model"]["runtime"] == "onnx"


def test_index_is_queried_with_any_runtime_of_its_model(
    onnx_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = {}
    for runtime in ("onnx", "torch", "onnx-int8"):
        code, out, err = run(
            [
                "normalize",
                "heart attack",
                "diabetes",
                "--index",
                str(onnx_index),
                "--json",
                "--runtime",
                runtime,
                "--threads",
                "1",
            ],
            capsys,
        )
        assert code == 0, err
        answers[runtime] = _top(out)
    assert [c for c, _ in answers["torch"]] == [c for c, _ in answers["onnx"]]
    for (_, a), (_, b) in zip(answers["torch"], answers["onnx"], strict=True):
        assert a == pytest.approx(b, abs=1e-4)


def test_api_runtime_argument(onnx_index: Path) -> None:
    torch_top = api.normalize("heart attack", index=onnx_index, k=1)
    onnx_top = api.normalize("heart attack", index=onnx_index, k=1, runtime="onnx")
    assert onnx_top[0].concept_id == torch_top[0].concept_id
    assert api.search_space(onnx_index, "onnx").encoder.runtime.value == "onnx"
    assert api.search_space(onnx_index).encoder.runtime.value == "torch"


def test_unavailable_runtime_is_a_one_line_error(
    onnx_index: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forward_mod, "bf16_supported", lambda device: False)
    code, _, err = run(
        ["normalize", "fever", "--index", str(onnx_index), "--runtime", "bf16"], capsys
    )
    assert code != 0 and "no native bfloat16" in err and "Traceback" not in err
    code, _, err = run(["normalize", "fever", "--runtime", "fast"], capsys)
    assert code != 0 and "'fast' is not one of" in err
