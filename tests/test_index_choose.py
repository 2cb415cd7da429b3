"""Backend choice as a pure function of size, dimension and memory budget (a table)."""

from __future__ import annotations

import sys

import pytest

from termnorm.errors import MissingExtraError
from termnorm.index import Backend, choose_backend, parse_bytes
from termnorm.index.choose import estimate_bytes
from termnorm.index.factory import resolve_backend

GB = 1 << 30
MB = 1 << 20


@pytest.mark.parametrize(
    ("n_vectors", "dim", "budget", "faiss", "expected", "resident"),
    [
        (0, 384, 1 * GB, True, Backend.EXACT, 1),  # empty
        (35, 32, 1 * GB, True, Backend.EXACT, 1),  # tiny KG
        (80_000, 384, 4 * GB, True, Backend.EXACT, 1),  # MEDIC-sized
        (250_000, 768, 4 * GB, True, Backend.EXACT, 1),  # largest exact
        (250_001, 768, 4 * GB, True, Backend.FAISS_FLAT, None),  # just past exact
        (1_500_000, 768, 8 * GB, True, Backend.FAISS_FLAT, None),  # fits flat
        (3_000_000, 768, 16 * GB, True, Backend.FAISS_HNSW, None),  # too many for flat
        (3_000_000, 768, 4 * GB, True, Backend.FAISS_IVFPQ, None),  # memory tight
        (1_000_000, 384, 1 * GB, True, Backend.FAISS_IVFPQ, None),  # 4096 lists: flat quantizer
        (15_000_000, 768, 24 * GB, True, Backend.FAISS_IVF_HNSW, None),  # UMLS: 16384 lists
        (15_000_000, 384, 2 * GB, True, Backend.FAISS_IVF_HNSW, None),  # UMLS in 2 GiB
        (15_000_000, 768, 24 * GB, False, Backend.EXACT, 0),  # no faiss: streamed from disk
        (80_000, 384, 4 * GB, False, Backend.EXACT, 1),  # no faiss, fits: in RAM
        (100_000, 384, 4 * MB, True, Backend.FAISS_IVFPQ, None),  # tiny budget, trainable
        (10_000, 384, 1 * MB, True, Backend.EXACT, 0),  # tiny budget, too few to train PQ
    ],
)
def test_choice_table(
    n_vectors: int, dim: int, budget: int, faiss: bool, expected: Backend, resident: int | None
) -> None:
    spec = choose_backend(n_vectors, dim, budget, faiss_available=faiss)
    assert spec.backend is expected
    assert spec.reason
    assert spec.params.get("resident") == resident
    if resident != 0:  # a streamed exact index is the fallback when nothing fits
        assert estimate_bytes(expected, n_vectors, dim, spec.params) <= budget


def test_ivf_hnsw_takes_over_from_16384_lists() -> None:
    flat = choose_backend(8_000_000, 384, 2 * GB)
    graph = choose_backend(9_000_000, 384, 2 * GB)
    assert (flat.backend, flat.params["nlist"]) == (Backend.FAISS_IVFPQ, 8192)
    assert (graph.backend, graph.params["nlist"]) == (Backend.FAISS_IVF_HNSW, 16384)
    # the graph over the centroids is counted
    base = estimate_bytes(Backend.FAISS_IVFPQ, 9_000_000, 384, graph.params)
    assert estimate_bytes(Backend.FAISS_IVF_HNSW, 9_000_000, 384, graph.params) > base


def test_ivfpq_parameters_fit_and_divide_the_dimension() -> None:
    spec = choose_backend(3_000_000, 768, 4 * GB)
    assert 768 % spec.params["m"] == 0
    assert spec.params["nlist"] & (spec.params["nlist"] - 1) == 0  # a power of two
    assert spec.params["nlist"] * 39 <= 3_000_000


def test_budget_too_small_for_any_backend() -> None:
    with pytest.raises(ValueError, match="too small for 15000000 vectors"):
        choose_backend(15_000_000, 768, 10 * MB)


def test_choice_is_pure() -> None:
    assert choose_backend(3_000_000, 768, 4 * GB) == choose_backend(3_000_000, 768, 4 * GB)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4GB", 4 * GB),
        ("4G", 4 * GB),
        ("512MiB", 512 * MB),
        ("1.5gb", int(1.5 * GB)),
        ("123", 123),
        (" 2 kb ", 2048),
        (77, 77),
    ],
)
def test_parse_bytes(text: str | int, expected: int) -> None:
    assert parse_bytes(text) == expected


def test_parse_bytes_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match=r"write e\.g\. 4GB"):
        parse_bytes("lots")


def test_forced_backend_honours_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    streamed = resolve_backend("exact", 10**7, 768, 1 * GB)
    assert (streamed.backend, streamed.params["resident"]) == (Backend.EXACT, 0)
    assert resolve_backend("exact", 1000, 768, 1 * GB).params["resident"] == 1
    with pytest.raises(ValueError, match=r"faiss-flat needs about .* raise --memory-budget"):
        resolve_backend("faiss-flat", 10**6, 384, 100 * MB)


def test_forced_backend_and_missing_faiss(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_backend("exact", 10**7, 768).backend is Backend.EXACT
    assert resolve_backend("faiss-hnsw", 10, 8).params["m"] == 32
    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(MissingExtraError, match="faiss"):
        resolve_backend("faiss-flat", 10, 8)
