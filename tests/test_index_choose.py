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
    ("n_vectors", "dim", "budget", "faiss", "expected"),
    [
        (0, 384, 1 * GB, True, Backend.EXACT),  # empty
        (35, 32, 1 * GB, True, Backend.EXACT),  # tiny KG
        (80_000, 384, 4 * GB, True, Backend.EXACT),  # MEDIC-sized
        (250_000, 768, 4 * GB, True, Backend.EXACT),  # largest exact
        (250_001, 768, 4 * GB, True, Backend.FAISS_FLAT),  # just past exact
        (1_500_000, 768, 8 * GB, True, Backend.FAISS_FLAT),  # fits flat
        (3_000_000, 768, 16 * GB, True, Backend.FAISS_HNSW),  # too many for flat, HNSW fits
        (3_000_000, 768, 4 * GB, True, Backend.FAISS_IVFPQ),  # memory tight
        (15_000_000, 768, 24 * GB, True, Backend.FAISS_IVFPQ),  # full UMLS in 24 GiB
        (15_000_000, 768, 24 * GB, False, Backend.EXACT),  # no faiss: streamed exact
        (100_000, 384, 4 * MB, True, Backend.FAISS_IVFPQ),  # tiny budget, trainable
        (10_000, 384, 1 * MB, True, Backend.EXACT),  # tiny budget, too few to train PQ
    ],
)
def test_choice_table(
    n_vectors: int, dim: int, budget: int, faiss: bool, expected: Backend
) -> None:
    spec = choose_backend(n_vectors, dim, budget, faiss_available=faiss)
    assert spec.backend is expected
    assert spec.reason
    if expected is not Backend.EXACT and faiss:
        assert estimate_bytes(expected, n_vectors, dim, spec.params) <= budget


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


def test_forced_backend_and_missing_faiss(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_backend("exact", 10**7, 768).backend is Backend.EXACT
    assert resolve_backend("faiss-hnsw", 10, 8).params["m"] == 32
    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(MissingExtraError, match="faiss"):
        resolve_backend("faiss-flat", 10, 8)
