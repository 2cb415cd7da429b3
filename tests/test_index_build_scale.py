"""Index builds in shards (issue 34): the Ray engine writes the local engine's index bit for
bit, a killed build resumes with the missing shards only, a changed KG, model or runtime is
refused by name, ``--device cuda`` without a GPU is refused, and the GPU path where a GPU is."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from conftest import build_tiny_bert, make_tiny_kg
from termnorm import api
from termnorm.encoders.device import Device, DeviceUnavailableError, resolve_device
from termnorm.engines import RayWorkerError
from termnorm.index import encoding
from termnorm.index.build_config import ScaleConfig
from termnorm.index.ray_encoding import EncoderSpec, RayEngine, _ShardActor, encoder_identity
from termnorm.index.shards import MANIFEST_NAME, plan_shards, shard_work_dir
from termnorm.index.term_index import TermIndex
from termnorm.io.resumable import ResumeError
from termnorm.kg import KnowledgeGraph
from test_normalize_cli import run

SHARD = 6  # the tiny KG's 35 distinct strings → 6 shards


class Interrupted(RuntimeError):
    """The injected failure that stands for a killed build."""


@pytest.fixture()
def fail_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Count the shards the local engine encodes; raise :class:`Interrupted` at shard
    ``state["fail"]`` (its number among this run's encodes) when set."""
    state: dict[str, Any] = {"calls": 0, "fail": None}
    real = encoding.encode_shard

    def counting(*args: Any, **kwargs: Any) -> np.ndarray:
        if state["fail"] is not None and state["calls"] == state["fail"]:
            state["fail"] = None
            raise Interrupted("killed")
        state["calls"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(encoding, "encode_shard", counting)
    yield state


def _build(kg: Path, model: Path, out: Path, **options: Any) -> TermIndex:
    return api.build_index(
        kg,
        model=model,
        out=out,
        backend="exact",
        memory_budget="1GB",
        shard_size=SHARD,
        device="cpu",
        show_progress=False,
        **options,
    )


def _same_index(a: Path, b: Path) -> None:
    """Same vectors (bytes), tables and card apart from when and by which engine."""
    for name in ("term_vectors.npy", "concept_vectors.npy"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    for name in ("terms.parquet", "concepts.parquet"):
        pd.testing.assert_frame_equal(pd.read_parquet(a / name), pd.read_parquet(b / name))
    cards = []
    for folder in (a, b):
        card = json.loads((folder / "index.json").read_text())
        del card["created"]
        for key in ("engine", "workers", "resumed_shards"):
            card["build"].pop(key, None)
        cards.append(card)
    assert cards[0] == cards[1]


def test_shards_cover_the_strings_in_order() -> None:
    assert [(s.start, s.stop) for s in plan_shards(14, 6)] == [(0, 6), (6, 12), (12, 14)]
    assert plan_shards(0, 6) == []
    with pytest.raises(ValueError, match="at least 1"):
        plan_shards(3, 0)


def test_a_killed_build_resumes_with_the_missing_shards_only(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, fail_at: dict[str, Any]
) -> None:
    whole = _build(tiny_kg_dir, tiny_bert_path, tmp_path / "whole")
    assert fail_at["calls"] == 6 and whole.card["build"] == {
        "engine": "local",
        "device": "cpu",
        "shard_size": SHARD,
        "shards": 6,
        "resumed_shards": 0,
    }
    assert not shard_work_dir(tmp_path / "whole").exists()  # removed once saved

    out = tmp_path / "idx"
    fail_at.update(calls=0, fail=4)
    with pytest.raises(Interrupted):
        _build(tiny_kg_dir, tiny_bert_path, out)
    work = shard_work_dir(out)
    assert not out.exists() and len(list(work.glob("shard-*.npy"))) == 4
    fail_at.update(calls=0)
    index = _build(tiny_kg_dir, tiny_bert_path, out)
    assert fail_at["calls"] == 2 and index.card["build"]["resumed_shards"] == 4
    assert not work.exists()
    _same_index(tmp_path / "whole", out)


class _RecordingBar:
    """A stand-in for the build's tqdm bar that keeps every ``update`` and its total."""

    made: ClassVar[list[_RecordingBar]] = []

    def __init__(self, total: int, initial: int = 0, **_: Any) -> None:
        self.total, self.n, self.updates = total, initial, list[int]()
        _RecordingBar.made.append(self)

    def update(self, n: int) -> None:
        self.updates.append(n)
        self.n += n

    def set_postfix_str(self, *_: Any) -> None:
        """The shard count is not checked here."""

    def close(self) -> None:
        """Nothing to close."""


def test_the_bar_moves_with_each_encoder_batch(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(encoding, "tqdm", _RecordingBar)
    _RecordingBar.made.clear()
    index = _build(tiny_kg_dir, tiny_bert_path, tmp_path / "idx", batch_size=2)
    (bar,) = _RecordingBar.made
    strings = index.terms["term"].nunique()  # the bar counts distinct strings
    shards = index.card["build"]["shards"]
    assert bar.total == strings and bar.n == strings
    assert len([n for n in bar.updates if n]) > shards
    assert all(0 < n <= 2 for n in bar.updates if n)  # one update per batch of <= 2 strings


def test_a_ray_like_engine_without_batches_moves_the_bar_per_shard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class ShardsOnly:
        def describe(self) -> dict[str, Any]:
            return {"engine": "test", "device": "cpu"}

        def encode(self, shards: Any, texts: pd.Index, on_batch: Any = None) -> Iterator[Any]:
            for shard in shards:  # no on_batch calls, as the Ray engine
                yield shard, np.ones((len(shard), 4), dtype=np.float16)

    monkeypatch.setattr(encoding, "tqdm", _RecordingBar)
    _RecordingBar.made.clear()
    uniques = pd.Index([f"t{i}" for i in range(14)])
    codes = np.arange(14)
    out, report = encoding.stream_term_vectors(
        codes,
        uniques,
        4,
        plan_shards(14, 6),
        ShardsOnly(),  # type: ignore[arg-type]
    )
    assert report.encoded == 3 and out.shape == (14, 4)
    assert _RecordingBar.made[0].updates == [6, 6, 2]


def _interrupt(kg: Path, model: Path, out: Path, fail_at: dict[str, Any]) -> None:
    fail_at.update(calls=0, fail=2)
    with pytest.raises(Interrupted):
        _build(kg, model, out)


def test_a_changed_kg_model_or_runtime_is_refused_by_name(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, fail_at: dict[str, Any]
) -> None:
    out = tmp_path / "idx"
    _interrupt(tiny_kg_dir, tiny_bert_path, out, fail_at)
    kg = make_tiny_kg()
    terms = pd.concat([kg.terms, kg.terms.iloc[:1].assign(term="brand new synonym")])
    changed = KnowledgeGraph(kg.concepts, terms.reset_index(drop=True), kg.relations)
    other_kg = changed.save(tmp_path / "kg2", card={"sources": [{"format": "fixture"}]})
    with pytest.raises(ResumeError, match=r"made with another KG, shard plan \(kg\.fingerprint"):
        _build(other_kg, tiny_bert_path, out)
    other_model = build_tiny_bert(tmp_path / "bert2", seed=1)
    with pytest.raises(ResumeError, match=r"another model \(model\.fingerprint.*--overwrite"):
        _build(tiny_kg_dir, other_model, out)
    with pytest.raises(
        ResumeError, match=r"another runtime \(runtime\.runtime: \"torch\" → \"onnx\""
    ):
        _build(tiny_kg_dir, tiny_bert_path, out, runtime="onnx")
    assert len(list(shard_work_dir(out).glob("shard-*.npy"))) == 2  # nothing was touched

    fail_at.update(calls=0)  # --overwrite: the old shards go, all are encoded again
    index = _build(other_kg, tiny_bert_path, out, overwrite=True)
    assert index.card["build"]["resumed_shards"] == 0 and fail_at["calls"] == 6


def test_a_shard_file_of_another_shape_is_refused(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, fail_at: dict[str, Any]
) -> None:
    out = tmp_path / "idx"
    _interrupt(tiny_kg_dir, tiny_bert_path, out, fail_at)
    np.save(shard_work_dir(out) / "shard-000001.npy", np.zeros((2, 3), np.float16))
    with pytest.raises(ResumeError, match=r"shard-000001\.npy holds float16 \(2, 3\).*delete it"):
        _build(tiny_kg_dir, tiny_bert_path, out)


def test_ray_options_need_the_ray_engine() -> None:
    with pytest.raises(ValueError, match="--workers and --address choose Ray workers"):
        ScaleConfig(workers=2)
    with pytest.raises(ValueError, match="--shard-size must be at least 1"):
        ScaleConfig(shard_size=0)


@pytest.mark.parametrize(
    ("device", "runtime", "gpus", "expected"),
    [
        ("cpu", "torch", 1, "cpu"),
        ("auto", "torch", 0, "cpu"),
        ("auto", "torch", 2, "cuda"),
        ("auto", "onnx", 2, "cpu"),  # ONNX Runtime runs on the CPU
        ("cuda", "bf16", 1, "cuda"),
    ],
)
def test_device_choice(device: str, runtime: str, gpus: int, expected: str) -> None:
    assert resolve_device(device, runtime, gpus=gpus) == expected


def test_cuda_without_a_gpu_or_with_onnx_is_refused() -> None:
    with pytest.raises(DeviceUnavailableError, match=r"no GPU is available here.*--device cpu"):
        resolve_device(Device.CUDA, "torch", gpus=0)
    with pytest.raises(DeviceUnavailableError, match="--runtime onnx runs on the CPU only"):
        resolve_device(Device.CUDA, "onnx", gpus=1)


def test_cli_refuses_cuda_here_and_shows_one_bar(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch = pytest.importorskip("torch")
    args = [
        "index",
        "build",
        "--kg",
        str(tiny_kg_dir),
        "--model",
        str(tiny_bert_path),
        "--backend",
        "exact",
        "--memory-budget",
        "1GB",
        "--shard-size",
        str(SHARD),
    ]
    if not torch.cuda.is_available():
        code, _, err = run([*args, "--out", str(tmp_path / "gpu"), "--device", "cuda"], capsys)
        assert code == 1 and "--device cuda: no GPU is available here" in err
        assert not (tmp_path / "gpu").exists()
    code, out, err = run([*args, "--out", str(tmp_path / "idx"), "--device", "cpu"], capsys)
    assert code == 0, err
    assert "shards 6/6" in err and err.count("encoding (local, cpu)") >= 1
    assert "local, cpu; 6 shards of 6" in out


def test_gpu_build_matches_the_cpu_build(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU here: the cuda build path is tested where a GPU is lent")
    cpu = _build(tiny_kg_dir, tiny_bert_path, tmp_path / "cpu")
    gpu = api.build_index(
        tiny_kg_dir,
        model=tiny_bert_path,
        out=tmp_path / "gpu",
        backend="exact",
        memory_budget="1GB",
        shard_size=SHARD,
        device="cuda",
        show_progress=False,
    )
    assert gpu.card["build"]["device"] == "cuda"
    np.testing.assert_allclose(
        np.asarray(gpu.term_vectors, np.float32),
        np.asarray(cpu.term_vectors, np.float32),
        atol=2e-3,
    )


@pytest.mark.slow  # ~1 min: Ray starts, and each build starts 2 actors importing torch
def test_ray_build_equals_the_local_build_and_resumes_a_local_one(
    local_ray: None,
    tiny_kg_dir: Path,
    tiny_bert_path: Path,
    tmp_path: Path,
    fail_at: dict[str, Any],
) -> None:
    _build(tiny_kg_dir, tiny_bert_path, tmp_path / "local")
    ray_index = _build(tiny_kg_dir, tiny_bert_path, tmp_path / "ray", engine="ray", workers=2)
    assert ray_index.card["build"] == {
        "engine": "ray",
        "workers": 2,
        "device": "cpu",
        "shard_size": SHARD,
        "shards": 6,
        "resumed_shards": 0,
    }
    _same_index(tmp_path / "local", tmp_path / "ray")

    # a local build killed after 2 shards, finished by Ray workers: they encode the other 4
    out = tmp_path / "resumed"
    _interrupt(tiny_kg_dir, tiny_bert_path, out, fail_at)
    manifest = json.loads((shard_work_dir(out) / MANIFEST_NAME).read_text())
    assert manifest["plan"]["shards"] == 6 and "engine" not in manifest
    index = _build(tiny_kg_dir, tiny_bert_path, out, engine="ray", workers=2)
    assert index.card["build"]["resumed_shards"] == 2
    _same_index(tmp_path / "local", out)


@pytest.mark.slow  # ~1 min: as above, plus one actor restart
def test_a_worker_killed_mid_shard_is_restarted_and_its_shard_redone(
    local_ray: None,
    tiny_kg_dir: Path,
    tiny_bert_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kill -9 of a Ray worker while it encodes: Ray restarts the actor, the shard is encoded
    again, and the index is still the local build's, bit for bit."""
    from termnorm.index import ray_encoding

    marker = tmp_path / "killed-once"

    class DyingActor(ray_encoding._ShardActor):  # local: Ray pickles it by value
        def encode(self, index: int, texts: list[str]) -> tuple[int, np.ndarray | None, str]:
            if index == 2 and not marker.exists():
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)
            return super().encode(index, texts)

    monkeypatch.setattr(ray_encoding, "_ShardActor", DyingActor)
    _build(tiny_kg_dir, tiny_bert_path, tmp_path / "local")
    index = _build(tiny_kg_dir, tiny_bert_path, tmp_path / "ray", engine="ray", workers=2)
    assert marker.exists(), "no worker was killed: the test did not test anything"
    assert index.card["build"]["shards"] == 6 and index.card["build"]["resumed_shards"] == 0
    _same_index(tmp_path / "local", tmp_path / "ray")

    # without restarts the build stops with a message, keeps its shards, and a rerun finishes
    marker.unlink()
    monkeypatch.setattr(ray_encoding, "RETRIES", 0)
    with pytest.raises(RayWorkerError, match=r"died .* after 0 restarts.*rerun the same command"):
        _build(tiny_kg_dir, tiny_bert_path, tmp_path / "dead", engine="ray", workers=2)
    rerun = _build(tiny_kg_dir, tiny_bert_path, tmp_path / "dead", engine="ray", workers=2)
    assert rerun.card["build"]["resumed_shards"] >= 1
    _same_index(tmp_path / "local", tmp_path / "dead")


def test_a_shard_actor_encodes_as_the_local_engine_and_reports_its_encoder(
    tiny_bert_path: Path, tmp_path: Path
) -> None:
    """The actors' code, run in this process (the Ray run itself is the slow test above)."""
    pytest.importorskip("ray")
    spec = EncoderSpec(str(tiny_bert_path), "mean", 32, "torch", "cpu")
    driver = spec.load()
    actor = _ShardActor(spec, 16)
    identity = actor.identity()
    identity.pop("host")
    assert identity == encoder_identity(driver)
    texts = ["heart attack", "fever", "heart attack"]
    index, vectors, error = actor.encode(3, texts)
    assert (index, error) == (3, "") and vectors is not None
    assert vectors.tobytes() == encoding.encode_shard(driver, texts, 16).tobytes()

    engine = RayEngine(driver, "cpu", 16)
    broken = _ShardActor(EncoderSpec(str(tmp_path / "nope"), "mean", 32, "torch", "cpu"), 16)
    assert broken.encode(0, ["x"])[2].startswith("ArtifactMismatchError: ")
    with pytest.raises(RayWorkerError, match=r"a worker on .* could not load the model"):
        engine._check([broken.identity()])
    other = {**identity, "fingerprint": "another", "host": "node-2"}
    with pytest.raises(
        RayWorkerError, match=r"the worker on node-2 loads another encoder .*fingerprint"
    ):
        engine._check([other])
