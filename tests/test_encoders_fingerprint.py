"""Model fingerprints: a hash of every identity byte, stored at save time and reused while the
files are unchanged; any changed byte (or pooling) gives another fingerprint."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from termnorm.encoders import TermEncoder, model_fingerprint
from termnorm.encoders import fingerprint as fp
from termnorm.encoders.interpolation import wise_ft_in_place
from termnorm.encoders.pooling import Pooling


@pytest.fixture(autouse=True)
def no_memo() -> Iterator[None]:
    """Each test hashes for itself (the per-process memo would hide the stored record)."""
    fp._digests.clear()
    yield
    fp._digests.clear()


def _flip_middle_byte(path: Path) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 2)
        byte = fh.read(1)
        fh.seek(size // 2)
        fh.write(bytes([byte[0] ^ 0x01]))


def _later(path: Path) -> None:
    """Move the file's modification time on, as an edit made later would."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_stable_across_loads_and_pooling_specific(tiny_bert_path: Path) -> None:
    a = TermEncoder.load(tiny_bert_path, device="cpu").fingerprint
    fp._digests.clear()
    assert TermEncoder.load(tiny_bert_path, device="cpu").fingerprint == a
    assert model_fingerprint(tiny_bert_path) == a == model_fingerprint(tiny_bert_path, "mean")
    assert model_fingerprint(tiny_bert_path, Pooling.CLS) != a
    assert len(a) == 64  # a full SHA-256


def test_any_weight_byte_changes_it(tiny_bert_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "bert"
    shutil.copytree(tiny_bert_path, folder)
    before = model_fingerprint(folder)
    _flip_middle_byte(folder / "model.safetensors")  # same size, a byte far from both ends
    fp._digests.clear()
    assert model_fingerprint(folder) != before


def test_a_changed_tokenizer_changes_it(tiny_bert_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "bert"
    shutil.copytree(tiny_bert_path, folder)
    before = model_fingerprint(folder)
    with open(folder / "vocab.txt", "a") as fh:
        fh.write("extra\n")
    assert model_fingerprint(folder) != before


def test_save_stores_the_full_hash_and_loads_reuse_it(
    tiny_encoder: TermEncoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tiny_encoder.save(tmp_path / "model")
    record = json.loads((out / fp.FINGERPRINT_FILE).read_text())
    assert set(record["files"]) >= {"model.safetensors", "1_Pooling/config.json", "modules.json"}
    assert record["sha256"] == fp._hash(fp.read_model_folder(out), sorted(record["files"]))
    expected = model_fingerprint(out)
    fp._digests.clear()

    def no_hashing(*args: object) -> str:
        raise AssertionError("the stored hash should have been used")

    monkeypatch.setattr(fp, "_hash", no_hashing)
    assert TermEncoder.load(out, device="cpu").fingerprint == expected
    assert expected == hashlib.sha256(f"{record['sha256']}\0mean".encode()).hexdigest()


def test_a_stale_record_is_not_trusted(tiny_encoder: TermEncoder, tmp_path: Path) -> None:
    out = tiny_encoder.save(tmp_path / "model")
    before = model_fingerprint(out)
    _flip_middle_byte(out / "model.safetensors")
    _later(out / "model.safetensors")
    fp._digests.clear()
    assert model_fingerprint(out) != before  # the size still matches, the time does not


def test_wise_ft_rewrites_the_record(tiny_bert_path: Path, tmp_path: Path) -> None:
    from conftest import build_tiny_bert

    tuned = TermEncoder.load(tiny_bert_path, device="cpu").save(tmp_path / "tuned")
    base = build_tiny_bert(tmp_path / "base", seed=1)
    before = model_fingerprint(tuned)
    wise_ft_in_place(tuned, base, 0.5)
    fp._digests.clear()
    record = json.loads((tuned / fp.FINGERPRINT_FILE).read_text())
    assert record["files"] == fp._stats(fp.read_model_folder(tuned))  # valid for the new weights
    assert model_fingerprint(tuned) != before


def test_a_saved_encoder_keeps_the_identity_of_what_it_wrote(
    tiny_encoder: TermEncoder, tmp_path: Path
) -> None:
    written = tiny_encoder.save(tmp_path / "tmp-save")
    written.rename(tmp_path / "model")  # as an atomic save does
    assert tiny_encoder.fingerprint == model_fingerprint(tmp_path / "model")
