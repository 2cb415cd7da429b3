"""The service's synonyms store: every byte written or nothing acknowledged, and a torn last
line (a crash in the middle of a write) skipped and reported, not a service that never
starts."""

from __future__ import annotations

import errno
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from termnorm.errors import InputFormatError
from termnorm.serve import synonym_store
from termnorm.serve.synonym_store import (
    SynonymStoreError,
    append_synonym_store,
    read_synonym_store,
    torn_path,
)

WHOLE = '{"concept_id": "T:0001", "text": "ok"}\n{"concept_id": "T:0002", "text": "fine"}\n'
PAIRS = [("T:0003", "sugar disease"), ("T:0004", "wheezing ✓")]


def _short_writes(limit: int, then: OSError | None = None) -> Callable[[int, bytes], int]:
    """An ``os.write`` that writes at most ``limit`` bytes per call (really), and after the
    first call raises ``then`` when given."""
    real = os.write
    calls = []

    def write(fd: int, data: bytes) -> int:
        if then is not None and calls:
            raise then
        calls.append(fd)
        return real(fd, bytes(data)[:limit])

    return write


def test_a_short_write_is_continued_until_every_byte_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "syn.jsonl"
    store.write_text(WHOLE, encoding="utf-8")
    monkeypatch.setattr(synonym_store.os, "write", _short_writes(7))
    append_synonym_store(store, PAIRS)
    monkeypatch.undo()
    assert read_synonym_store(store).pairs == [("T:0001", "ok"), ("T:0002", "fine"), *PAIRS]


@pytest.mark.parametrize(
    ("then", "reason"),
    [(OSError(errno.ENOSPC, "No space left on device"), "No space left on device"), (None, "")],
)
def test_a_write_that_fails_half_way_is_undone_and_not_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, then: OSError | None, reason: str
) -> None:
    store = tmp_path / "syn.jsonl"
    store.write_text(WHOLE, encoding="utf-8")
    if then is None:  # the system accepts nothing: os.write answers 0
        monkeypatch.setattr(synonym_store.os, "write", lambda fd, data: 0)
        reason = "write accepted 0 of"
    else:
        monkeypatch.setattr(synonym_store.os, "write", _short_writes(5, then))
    with pytest.raises(SynonymStoreError, match=rf"syn.jsonl: could not store .*{reason}"):
        append_synonym_store(store, PAIRS)
    monkeypatch.undo()
    assert store.read_text(encoding="utf-8") == WHOLE  # the 5 bytes written are cut off


@pytest.mark.parametrize(
    "torn",
    [
        b'{"concept_id": "T:0003", "te',  # cut short
        b'{"concept_id": "T:0003", "te\n',  # cut short, then a newline
        '{"concept_id": "T:0003", "text": "caf\u00e9"}'.encode()[:-4],  # inside a UTF-8 char
        b"\x00" * 37,  # what a lost write leaves after a power cut
    ],
)
def test_a_torn_last_line_is_skipped_reported_and_moved_on_the_next_append(
    tmp_path: Path, torn: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    store = tmp_path / "syn.jsonl"
    store.write_bytes(WHOLE.encode() + torn)
    with caplog.at_level(logging.WARNING, "termnorm.serve.synonym_store"):
        read = read_synonym_store(store)
    assert read.pairs == [("T:0001", "ok"), ("T:0002", "fine")] and read.skipped == 1
    assert read.torn_line == 3
    assert f"{store}:3: " in caplog.text and "torn last line" in caplog.text
    append_synonym_store(store, PAIRS)  # starts on a fresh line
    again = read_synonym_store(store)
    assert again.pairs == [("T:0001", "ok"), ("T:0002", "fine"), *PAIRS] and again.skipped == 0
    assert torn_path(store).read_bytes() == torn.rstrip() + b"\n"  # kept, not destroyed


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    store = tmp_path / "syn.jsonl"
    store.write_text(WHOLE.rstrip("\n"), encoding="utf-8")
    assert read_synonym_store(store).pairs == [("T:0001", "ok"), ("T:0002", "fine")]
    append_synonym_store(store, PAIRS[:1])
    assert read_synonym_store(store).pairs == [("T:0001", "ok"), ("T:0002", "fine"), PAIRS[0]]
    assert not torn_path(store).exists()


def test_a_long_torn_line_is_found_across_read_blocks(tmp_path: Path) -> None:
    store = tmp_path / "syn.jsonl"
    long_text = "x" * (3 * synonym_store._TAIL_BLOCK)
    torn = json.dumps({"concept_id": "T:0003", "text": long_text})[:-5]
    store.write_text(WHOLE + torn, encoding="utf-8")
    append_synonym_store(store, PAIRS)
    assert read_synonym_store(store).pairs == [("T:0001", "ok"), ("T:0002", "fine"), *PAIRS]
    assert torn_path(store).read_text(encoding="utf-8") == torn + "\n"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"concept_id": "T:0001", "te', r"syn.jsonl:2: not JSON \(Unterminated string"),
        ('["T:0001", "ok"]', r'syn.jsonl:2: expected \{"concept_id"'),
        ("\udcff", "syn.jsonl:2: not UTF-8"),
    ],
)
def test_a_bad_line_before_whole_ones_is_refused_with_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    store = tmp_path / "syn.jsonl"
    store.write_bytes(
        ('{"concept_id": "T:0001", "text": "ok"}\n' + line + "\n" + WHOLE).encode(
            "utf-8", "surrogateescape"
        )
    )
    with pytest.raises(InputFormatError, match=message):
        read_synonym_store(store)


# ---------------------------------------------------------------------- in the service
@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("fastapi")
    pytest.importorskip("prometheus_client")
    from _serve_fixtures import build_tiny_index

    return build_tiny_index(tmp_path_factory.mktemp("serve_store"), tiny_bert_path)


def test_the_service_starts_on_a_store_with_a_torn_last_line(
    index_dir: Path, tmp_path: Path
) -> None:
    from _serve_fixtures import serving

    store = tmp_path / "syn.jsonl"
    store.write_text(WHOLE + '{"concept_id": "T:0003", "te', encoding="utf-8")
    auth = {"Authorization": "Bearer t"}
    with serving(index_dir, synonyms=store, token="t") as client:
        ready = client.get("/v1/ready").json()
        assert ready["status"] == "ready"
        assert ready["domain_synonyms"] == 2 and ready["synonyms_skipped"] == 1
        added = client.post(
            "/v1/synonyms",
            json={"pairs": [{"concept_id": "T:0003", "text": "sugar"}]},
            headers=auth,
        )
        assert added.status_code == 200 and added.json()["total"] == 3
    with serving(index_dir, synonyms=store) as client:  # restarted: the file is whole again
        ready = client.get("/v1/ready").json()
        assert ready["domain_synonyms"] == 3 and ready["synonyms_skipped"] == 0


def test_a_failed_store_write_adds_nothing(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _serve_fixtures import serving

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    store = tmp_path / "syn.jsonl"
    store.write_text(WHOLE, encoding="utf-8")
    body = {"pairs": [{"concept_id": "T:0003", "text": "sugar disease"}]}
    with serving(index_dir, synonyms=store, token="t") as client:
        monkeypatch.setattr(synonym_store, "write_all", full)
        answer = client.post("/v1/synonyms", json=body, headers={"Authorization": "Bearer t"})
        assert answer.status_code == 500
        (item,) = answer.json()["detail"]
        assert item["type"] == "store_failed" and "No space left on device" in item["msg"]
        assert "nothing was added" in item["msg"]
        assert client.get("/v1/ready").json()["domain_synonyms"] == 2  # not swapped in
        assert client.get("/v1/concepts/T:0003").json()["domain_synonyms"] == []
    assert store.read_text(encoding="utf-8") == WHOLE
