"""The one file hasher (``termnorm._artifacts.file_sha256``) that cards, KG fingerprints,
projects and the bench cache use: SHA-256 of the files' bytes in order, streamed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from termnorm import _artifacts
from termnorm._artifacts import file_sha256
from termnorm.kg.graph import TABLES, table_fingerprint


def test_it_is_the_sha256_of_the_bytes_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_artifacts, "_BLOCK_BYTES", 3)  # several blocks per file
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"first file\x00")
    b.write_bytes(b"")
    whole = hashlib.sha256(b"first file\x00").hexdigest()
    assert file_sha256(a, chars=64) == whole
    assert file_sha256(a) == whole[:16]
    assert file_sha256(a, b, str(a)) == hashlib.sha256(2 * b"first file\x00").hexdigest()[:16]


def test_the_kg_fingerprint_hashes_its_tables_in_order(tmp_path: Path) -> None:
    data = b""
    for i, name in enumerate(TABLES):
        (tmp_path / f"{name}.parquet").write_bytes(bytes([i]) * 5)
        data += bytes([i]) * 5
    assert table_fingerprint(tmp_path) == hashlib.sha256(data).hexdigest()[:16]
