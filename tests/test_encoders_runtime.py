"""Inference runtimes: each runtime's vectors against fp32, the ONNX export cache, ``auto``'s
choice, the query cache, deduplication, and the errors a user meets."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from termnorm.encoders import Pooling, TermEncoder, onnx_export
from termnorm.encoders import forward as forward_mod
from termnorm.encoders.fidelity import PROBE_TERMS
from termnorm.encoders.int8_kernel import Int8Kernel, int8_kernel
from termnorm.encoders.query_cache import QueryCache
from termnorm.encoders.runtime import (
    AUTO_MIN_COSINE,
    Runtime,
    RuntimeMeasure,
    RuntimeUnavailableError,
    choose_runtime,
)
from termnorm.errors import MissingExtraError

TEXTS = ["heart attack", "mi", "type 2 diabetes mellitus with kidney disease", "fever", "x"]
# bounds on the tiny random BERT (hidden size 32): ONNX fp32 is the same arithmetic; int8
# with per-row activations measured 0.9999999 on it; bf16 activations perturb it more
TINY_BOUND = {Runtime.ONNX: 0.99999, Runtime.BF16: 0.99, Runtime.ONNX_INT8: 0.999}
# bounds on all-MiniLM-L6-v2 (slow test); per-row int8 measured >= 0.997 on 1,000 MEDIC terms
MINILM_BOUND = {Runtime.ONNX: 0.99999, Runtime.BF16: 0.9995, Runtime.ONNX_INT8: 0.995}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))


@pytest.fixture()
def bert_copy(tiny_bert_path: Path, tmp_path: Path) -> Path:
    """A private copy of the tiny BERT without exports other tests left in the shared folder
    (exports are written into the model folder)."""
    ignore = shutil.ignore_patterns(onnx_export.EXPORT_DIR)
    return Path(shutil.copytree(tiny_bert_path, tmp_path / "bert", ignore=ignore))


def _skip_without_bf16() -> None:
    if not forward_mod.bf16_supported(torch.device("cpu")):
        pytest.skip("this CPU has no native bfloat16")


def _min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float((a * b).sum(axis=1).min())


@pytest.mark.parametrize("runtime", [Runtime.ONNX, Runtime.ONNX_INT8, Runtime.BF16])
def test_runtime_vectors_stay_close_to_fp32(runtime: Runtime, bert_copy: Path) -> None:
    if runtime is Runtime.BF16:
        _skip_without_bf16()
    reference = TermEncoder.load(bert_copy, device="cpu").encode(TEXTS)
    encoder = TermEncoder.load(bert_copy, device="cpu", runtime=runtime)
    assert encoder.runtime is runtime
    vectors = encoder.encode(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert _min_cosine(vectors, reference) >= TINY_BOUND[runtime]


@pytest.mark.parametrize("pooling", [p.value for p in Pooling])
def test_onnx_graph_exports_every_pooling(pooling: str, bert_copy: Path) -> None:
    reference = TermEncoder.load(bert_copy, pooling=pooling, device="cpu").encode(TEXTS)
    encoder = TermEncoder.load(bert_copy, pooling=pooling, device="cpu", runtime="onnx")
    assert _min_cosine(encoder.encode(TEXTS), reference) >= TINY_BOUND[Runtime.ONNX]


def test_onnx_graph_includes_the_dense_head(bert_copy: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer, models

    torch.manual_seed(0)
    modules = [
        models.Transformer(str(bert_copy), max_seq_length=16),
        models.Pooling(32, pooling_mode="cls"),
        models.Dense(32, 16),
    ]
    SentenceTransformer(modules=modules, device="cpu").save(str(tmp_path / "st"))
    reference = TermEncoder.load(tmp_path / "st", device="cpu").encode(TEXTS)
    encoder = TermEncoder.load(tmp_path / "st", device="cpu", runtime="onnx")
    assert encoder.encode(TEXTS).shape == (len(TEXTS), 16)
    assert _min_cosine(encoder.encode(TEXTS), reference) >= TINY_BOUND[Runtime.ONNX]


def test_export_is_reused_while_the_fingerprint_matches(
    bert_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = TermEncoder.load(bert_copy, device="cpu")
    first = onnx_export.onnx_graph(encoder)
    assert first.parent == bert_copy / onnx_export.EXPORT_DIR / encoder.fingerprint
    stamp = first.stat().st_mtime_ns

    def fail(*args: object) -> None:
        raise AssertionError("exported again although the model did not change")

    monkeypatch.setattr(onnx_export, "_export", fail)
    again = TermEncoder.load(bert_copy, device="cpu")
    assert onnx_export.onnx_graph(again) == first
    assert first.stat().st_mtime_ns == stamp


def test_export_is_redone_when_the_model_changes(bert_copy: Path) -> None:
    from transformers import BertModel

    encoder = TermEncoder.load(bert_copy, device="cpu")
    old = onnx_export.onnx_graph(encoder)
    model = BertModel.from_pretrained(str(bert_copy))
    with torch.no_grad():
        model.embeddings.word_embeddings.weight.mul_(2.0)
    model.save_pretrained(str(bert_copy), safe_serialization=True)
    changed = TermEncoder.load(bert_copy, device="cpu")
    assert changed.fingerprint != encoder.fingerprint
    new = onnx_export.onnx_graph(changed)
    assert new.parent.name == changed.fingerprint
    assert not old.parent.exists()  # the stale export is removed from the model folder
    vectors = TermEncoder.load(bert_copy, device="cpu", runtime="onnx").encode(TEXTS)
    assert _min_cosine(vectors, changed.encode(TEXTS)) >= TINY_BOUND[Runtime.ONNX]


def test_folders_termnorm_may_not_write_use_the_cache(
    bert_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(onnx_export, "_writable", lambda root: False)
    encoder = TermEncoder.load(bert_copy, device="cpu")
    graph = onnx_export.onnx_graph(encoder, quantized=True)
    assert graph.parent == tmp_path / "cache" / "onnx" / encoder.fingerprint
    assert graph.name == onnx_export.INT8_FILE.format(kernel=int8_kernel().value)
    assert not (bert_copy / onnx_export.EXPORT_DIR).exists()


def test_installed_packages_are_not_written_into() -> None:
    import sysconfig

    assert not onnx_export._writable(Path(sysconfig.get_paths()["purelib"]) / "some_model")


@pytest.mark.parametrize("package", ["onnxruntime", "onnx"])
def test_missing_onnx_packages_name_the_extra(
    package: str, bert_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, package, None)
    with pytest.raises(MissingExtraError, match=r"termnorm\[onnx\]"):
        TermEncoder.load(bert_copy, device="cpu", runtime="onnx")


def test_bf16_is_refused_without_cpu_support(
    bert_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forward_mod, "bf16_supported", lambda device: False)
    with pytest.raises(RuntimeUnavailableError, match=r"no native bfloat16.*--runtime torch"):
        TermEncoder.load(bert_copy, device="cpu", runtime="bf16")


def _m(runtime: str, speed: float, cosine: float) -> RuntimeMeasure:
    return RuntimeMeasure(Runtime(runtime), speed, cosine)


@pytest.mark.parametrize(
    ("measures", "expected"),
    [
        ([], "torch"),
        ([_m("torch", 100, 1.0)], "torch"),
        ([_m("torch", 100, 1.0), _m("onnx", 150, 0.99999), _m("onnx-int8", 300, 0.97)], "onnx"),
        (
            [_m("torch", 100, 1.0), _m("onnx", 150, 0.99999), _m("onnx-int8", 300, 0.9995)],
            "onnx-int8",
        ),
        ([_m("torch", 100, 1.0), _m("bf16", 90, 0.9999), _m("onnx", 80, 1.0)], "torch"),
        ([_m("torch", 100, 1.0), _m("bf16", 200, 0.998)], "torch"),
        ([_m("torch", 100, 1.0), _m("bf16", 200, AUTO_MIN_COSINE)], "bf16"),
        ([_m("onnx", 100, 1.0), _m("torch", 100, 1.0)], "torch"),  # a tie: the simpler engine
        ([_m("onnx-int8", 500, 0.9)], "torch"),  # nothing faithful measured: the reference
    ],
)
def test_auto_takes_the_fastest_faithful_runtime(
    measures: list[RuntimeMeasure], expected: str
) -> None:
    assert choose_runtime(measures) is Runtime(expected)


def test_auto_resolves_to_a_concrete_runtime(bert_copy: Path) -> None:
    encoder = TermEncoder.load(bert_copy, device="cpu", runtime="auto", threads=1)
    assert encoder.runtime in (Runtime.TORCH, Runtime.BF16, Runtime.ONNX, Runtime.ONNX_INT8)
    assert encoder.encode(TEXTS).shape == (len(TEXTS), 32)


def test_query_cache_is_a_bounded_lru() -> None:
    cache = QueryCache(maxsize=2)
    v = np.ones(3, dtype=np.float32)
    cache.put(("a", "fp", "torch"), v)
    cache.put(("b", "fp", "torch"), 2 * v)
    assert cache.get(("a", "fp", "torch")) is not None  # a is now the most recent
    cache.put(("c", "fp", "torch"), 3 * v)
    assert len(cache) == 2
    assert cache.get(("b", "fp", "torch")) is None
    assert cache.get(("a", "fp", "onnx")) is None  # another runtime is another key
    stored = cache.get(("c", "fp", "torch"))
    assert stored is not None and not stored.flags.writeable
    with pytest.raises(ValueError, match="at least one"):
        QueryCache(0)


class _Counting:
    """Wraps a forward and records the rows of each call."""

    def __init__(self, inner: forward_mod.Forward) -> None:
        self.inner = inner
        self.rows: list[int] = []

    def __call__(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        self.rows.append(len(inputs["input_ids"]))
        return self.inner(inputs)


def test_queries_are_cached_per_runtime_and_fingerprint(bert_copy: Path) -> None:
    encoder = TermEncoder.load(bert_copy, device="cpu", runtime="torch")
    counting = _Counting(encoder._forward)
    encoder._forward = counting
    first = encoder.encode(["heart attack"])
    again = encoder.encode(["heart attack", "fever"])
    assert counting.rows == [1, 1]  # only "fever" was new
    np.testing.assert_array_equal(again[0], first[0])
    assert encoder.query_cache is not None and len(encoder.query_cache) == 2
    encoder.set_runtime("torch", query_cache_size=1)
    assert encoder.query_cache is not None and len(encoder.query_cache) == 0


def test_training_encoders_cache_nothing(tiny_encoder: TermEncoder) -> None:
    assert tiny_encoder.query_cache is None  # weights may change between calls


def test_identical_texts_are_encoded_once(bert_copy: Path) -> None:
    encoder = TermEncoder.load(bert_copy, device="cpu")
    counting = _Counting(encoder._forward)
    encoder._forward = counting
    texts = ["fever", "heart attack", "fever", "x", "heart attack"] * 20
    vectors = encoder.encode(texts, batch_size=2)
    assert sum(counting.rows) == 3
    np.testing.assert_array_equal(vectors[0], vectors[2])
    unique = TermEncoder.load(bert_copy, device="cpu").encode(["fever", "heart attack", "x"])
    np.testing.assert_allclose(vectors[:5], unique[[0, 1, 0, 2, 1]], atol=1e-6)


def test_batches_match_one_text_at_a_time(bert_copy: Path) -> None:
    encoder = TermEncoder.load(bert_copy, device="cpu")
    batched = encoder.encode(TEXTS, batch_size=2)
    alone = np.stack([encoder.encode([t])[0] for t in TEXTS])
    np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_threads_must_be_positive(bert_copy: Path) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        TermEncoder.load(bert_copy, device="cpu", runtime="torch", threads=0)


@pytest.mark.slow
@pytest.mark.parametrize("runtime", [Runtime.ONNX, Runtime.ONNX_INT8, Runtime.BF16])
def test_minilm_runtimes_stay_close_to_fp32(runtime: Runtime) -> None:
    if runtime is Runtime.BF16:
        _skip_without_bf16()
    texts = list(PROBE_TERMS)
    reference = TermEncoder.load(device="cpu").encode(texts)
    vectors = TermEncoder.load(device="cpu", runtime=runtime).encode(texts)
    assert _min_cosine(vectors, reference) >= MINILM_BOUND[runtime]


def test_int8_vectors_do_not_depend_on_the_batch(bert_copy: Path) -> None:
    # per-row activation ranges (row_quant): a query encoded alone gets the vector its text
    # has inside any batch, e.g. the index build's
    encoder = TermEncoder.load(bert_copy, device="cpu", runtime="onnx-int8")
    encoder.query_cache = None
    batched = encoder.encode(TEXTS * 3, batch_size=16)
    alone = np.stack([encoder.encode([t])[0] for t in TEXTS])
    np.testing.assert_allclose(batched[: len(TEXTS)], alone, atol=1e-5)


@pytest.mark.parametrize("kernel", list(Int8Kernel))
def test_row_quantization_keeps_each_row_within_its_bound(
    kernel: Int8Kernel, tmp_path: Path
) -> None:
    # runs the int8 kernel of the CPU the test runs on: a layout this CPU cannot multiply
    # exactly is skipped (the guard never chooses it here)
    from termnorm.encoders.int8_kernel import _both_ops, kernel_is_exact

    if not kernel_is_exact(_both_ops, kernel):
        pytest.skip(f"the {kernel.value} layout saturates on this CPU")
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from termnorm.encoders.row_quant import quantize_rows

    rng = np.random.default_rng(0)
    w = rng.normal(size=(64, 48)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"]),  # constant weight: quantized
            helper.make_node("MatMul", ["h", "x2"], ["y"]),  # two activations: left fp32
        ],
        "toy",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64]),
            helper.make_tensor_value_info("x2", TensorProto.FLOAT, [48, 8]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 8])],
        [numpy_helper.from_array(w, "w")],
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "a.onnx"
    )
    assert quantize_rows(tmp_path / "a.onnx", tmp_path / "q.onnx", kernel) == 1
    x = rng.normal(size=(5, 64)).astype(np.float32)
    x[0] *= 100.0  # an outlier row must not coarsen the others
    eye = np.eye(48, 8, dtype=np.float32)
    (got,) = ort.InferenceSession(str(tmp_path / "q.onnx")).run(None, {"x": x, "x2": eye})
    want = x @ w @ eye
    # |error| <= (row range / 2L) * ||W[:, n]||_1 + |x|_1 * (weight step / 2), per entry
    step = np.abs(w).max(axis=0) / 127
    span = x.max(axis=1) - x.min(axis=1)
    bound = (
        span[:, None] / (2 * kernel.levels) * np.abs(w).sum(axis=0)
        + np.abs(x).sum(axis=1)[:, None] * step
    )
    assert (np.abs(got - want) <= (bound @ eye) + 1e-4).all()
    relative = np.abs(got - want).max(axis=1) / np.abs(want).max(axis=1)
    assert relative[1:].max() < 0.05  # the ordinary rows stay fine beside the outlier


def test_default_build_runtime_is_int8_with_onnxruntime(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import importlib.util

    from termnorm.encoders.runtime import default_build_runtime

    assert default_build_runtime() is Runtime.ONNX_INT8
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert default_build_runtime() is Runtime.TORCH
    assert "termnorm[onnx]" in caplog.text


def test_the_base_install_has_the_int8_runtime() -> None:
    """The Quick start's install builds the default index with onnx-int8, not torch fp32."""
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    names = {d.split(">")[0].split("=")[0].strip() for d in project["dependencies"]}
    assert {"onnxruntime", "onnx"} <= names


def test_onnx_threads_sleep_when_idle(bert_copy: Path) -> None:
    """Idle pool threads do not spin (spinning doubled a build's CPU time on a busy machine)."""
    encoder = TermEncoder.load(bert_copy, device="cpu")
    forward = forward_mod.OnnxForward(onnx_export.onnx_graph(encoder, quantized=True), threads=2)
    options = forward.session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.intra_op_num_threads == 2


def test_int8_graph_is_reused_while_the_fingerprint_matches(
    bert_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = TermEncoder.load(bert_copy, device="cpu")
    first = onnx_export.onnx_graph(encoder, quantized=True)

    def fail(*args: object) -> None:
        raise AssertionError("quantized again although the model did not change")

    monkeypatch.setattr(onnx_export, "_quantize", fail)
    monkeypatch.setattr(onnx_export, "_export", fail)
    assert (
        onnx_export.onnx_graph(TermEncoder.load(bert_copy, device="cpu"), quantized=True) == first
    )
