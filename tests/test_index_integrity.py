"""A damaged index never answers: vector files are hashed at save and checked at load.

A NaN written into a saved index's vectors once gave ``nan`` scores with exit code 0. Now the
digest recorded in ``index.json`` no longer matches and the load names the folder and the
rebuild command; an index saved before digests existed has its vectors checked for NaN.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from _cli import run_main
from _index_fakes import KeyedEncoder, known_kg
from termnorm.errors import ArtifactMismatchError
from termnorm.index import Backend, TermIndex
from termnorm.index.integrity import first_non_finite


def _saved(tmp_path: Path, backend: Backend = Backend.EXACT) -> Path:
    index = TermIndex.build(known_kg(), KeyedEncoder(), backend, show_progress=False)
    return index.save(tmp_path / "idx")


def _poison(path: Path, row: int = 1) -> None:
    vectors = np.load(path, mmap_mode="r+")
    vectors[row, 0] = np.nan
    vectors.flush()
    del vectors


def _drop_digests(folder: Path) -> None:
    card = json.loads((folder / "index.json").read_text())
    del card["vectors"]["sha256"]  # as saved before vector digests existed
    (folder / "index.json").write_text(json.dumps(card))


@pytest.mark.parametrize("name", ["term_vectors.npy", "concept_vectors.npy"])
@pytest.mark.parametrize("mmap", [True, False])
def test_nan_in_saved_vectors_is_refused_with_rebuild(
    tmp_path: Path, name: str, mmap: bool
) -> None:
    folder = _saved(tmp_path)
    assert set(TermIndex.load(folder).card["vectors"]["sha256"]) == {
        "concept_vectors.npy",
        "term_vectors.npy",
    }
    _poison(folder / name)
    with pytest.raises(ArtifactMismatchError, match=rf"index {folder} is damaged: {name}") as err:
        TermIndex.load(folder, mmap=mmap)
    assert (
        f"rebuild it with `termnorm index build --kg KG_FOLDER --out {folder} --overwrite`"
        in str(err.value)
    )


def test_an_older_index_is_checked_for_nan_instead(tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    _drop_digests(folder)
    assert TermIndex.load(folder).search_terms(np.eye(8, dtype=np.float32)[:1], 1).ids[0, 0] == 0
    _poison(folder / "term_vectors.npy", row=2)
    with pytest.raises(ArtifactMismatchError, match=r"NaN or infinite value at row 2; rebuild"):
        TermIndex.load(folder)


def test_a_changed_faiss_file_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    folder = _saved(tmp_path, Backend.FAISS_FLAT)
    files = [p for p in (folder / "term_index").rglob("*") if p.is_file()]
    assert files and TermIndex.load(folder).card["vectors"]["sha256"]
    data = bytearray(files[0].read_bytes())
    data[-3] ^= 0xFF
    files[0].write_bytes(bytes(data))
    with pytest.raises(ArtifactMismatchError, match=r"term_index/.* is not the file .* rebuild"):
        TermIndex.load(folder)


def test_the_cli_exits_with_the_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _saved(tmp_path)
    _poison(folder / "term_vectors.npy")
    code, out, err = run_main(["normalize", "alpha disease", "--index", str(folder)], capsys)
    assert code == 1 and not out
    assert "is damaged: term_vectors.npy" in err and "termnorm index build" in err


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_first_non_finite(dtype: type) -> None:
    vectors = np.ones((70_000, 4), dtype=dtype)
    assert first_non_finite(vectors, block_rows=1000) is None
    vectors[66_001, 3] = np.inf
    vectors[68_000, 0] = np.nan
    assert first_non_finite(vectors, block_rows=1000) == 66_001


def test_index_info_refuses_damaged_vectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _saved(tmp_path)
    _poison(folder / "concept_vectors.npy")
    code, out, err = run_main(["index", "info", str(folder)], capsys)
    assert code == 1 and not out
    assert f"index {folder} is damaged: concept_vectors.npy is not the file" in err
    assert f"termnorm index build --kg KG_FOLDER --out {folder} --overwrite" in err


def test_index_info_refuses_a_changed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _saved(tmp_path)
    (folder / "concepts.parquet").write_bytes((folder / "terms.parquet").read_bytes())
    code, _, err = run_main(["index", "info", str(folder)], capsys)
    assert code == 1 and "concepts.parquet is not the table this index was built with" in err


def test_index_info_says_what_it_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _saved(tmp_path)
    card = json.loads((folder / "index.json").read_text())
    files = len(card["tables"]) + len(card["vectors"]["sha256"])
    code, out, _ = run_main(["index", "info", str(folder)], capsys)
    assert code == 0 and f"yes: {files} files match the SHA-256 digests" in out
    code, out, _ = run_main(["index", "info", str(folder), "--json"], capsys)
    assert code == 0 and json.loads(out)["verified"] == files
    _poison(folder / "term_vectors.npy")
    code, out, _ = run_main(["index", "info", str(folder), "--no-verify"], capsys)
    assert code == 0 and "not verified (--no-verify)" in out
    code, out, _ = run_main(["index", "info", str(folder), "--no-verify", "--json"], capsys)
    assert code == 0 and json.loads(out)["verified"] is None


def test_index_info_checks_an_older_index_for_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _saved(tmp_path)
    _drop_digests(folder)
    _poison(folder / "term_vectors.npy", row=2)
    code, _, err = run_main(["index", "info", str(folder)], capsys)
    assert code == 1 and "term_vectors.npy holds a NaN or infinite value at row 2" in err
