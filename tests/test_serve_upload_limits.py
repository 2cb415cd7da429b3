"""Upload limits (issue 29, item 10): a very wide header is checked in linear time and
refused at once, rows and columns are capped (413 naming the flag), and the work stops
when the client goes away."""

from __future__ import annotations

import asyncio
import io
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("python_multipart")

from _serve_fixtures import build_tiny_index, serving
from termnorm import api
from termnorm.errors import InputFormatError
from termnorm.io.tables import open_reader
from termnorm.search.domain import SearchSpace
from termnorm.search.file_spec import RowOptions
from termnorm.search.space_matcher import build_strategy
from termnorm.serve.batching import QueuedEncoder
from termnorm.serve.uploads import (
    UploadCancelled,
    UploadLimits,
    UploadQueue,
    map_upload,
    watch_disconnect,
)


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_upload_limits"), tiny_bert_path)


def test_repeated_columns_are_found_in_linear_time(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    names = [f"c{i}" for i in range(200_000)]
    wide.write_text(",".join([*names, "c7"]) + "\n" + "," * 200_000 + "\n")
    started = time.monotonic()
    with pytest.raises(InputFormatError, match=r"wide.csv:1: repeated column names: c7$"):
        open_reader(wide)
    assert time.monotonic() - started < 10  # quadratic: hours


def test_a_20k_column_upload_is_refused_at_once(index_dir: Path) -> None:
    header = ",".join(f"col{i}" for i in range(20_000)).encode()
    with serving(index_dir) as client:
        started = time.monotonic()
        answer = client.post(
            "/v1/normalize/file", files={"file": ("wide.csv", header + b"\n" + b"x\n")}
        )
        elapsed = time.monotonic() - started
    assert answer.status_code == 413, answer.text
    item = answer.json()["detail"][0]
    assert item["type"] == "too_many_columns" and item["loc"] == ["body", "file"]
    assert "20000 columns, more than the limit of 1000" in item["msg"]
    assert "--max-upload-columns" in item["msg"]
    assert elapsed < 5


def test_rows_over_the_cap_are_refused_naming_the_flag(index_dir: Path) -> None:
    with serving(index_dir, max_upload_rows=3) as client:
        ok = client.post("/v1/normalize/file", files={"file": ("t.csv", b"term\na\nb\nc\n")})
        over = client.post("/v1/normalize/file", files={"file": ("t.csv", b"term\na\nb\nc\nd\n")})
    assert ok.status_code == 200
    assert over.status_code == 413
    item = over.json()["detail"][0]
    assert item["type"] == "too_many_rows"
    assert "4 rows, more than the limit of 3" in item["msg"] and "--max-upload-rows" in item["msg"]


def test_the_disconnect_watch_sets_the_flag() -> None:
    polls = {"n": 0}

    async def is_disconnected() -> bool:
        polls["n"] += 1
        return polls["n"] >= 3  # the client goes away at the third look

    cancelled = threading.Event()
    asyncio.run(asyncio.wait_for(watch_disconnect(is_disconnected, cancelled, 0.001), 5))
    assert cancelled.is_set() and polls["n"] == 3


def test_a_cancelled_upload_stops_between_slices(index_dir: Path, tmp_path: Path) -> None:
    loaded = api.search_space(index_dir)
    space = SearchSpace(loaded.index, QueuedEncoder(loaded.encoder))  # the service's
    cancelled = threading.Event()
    slices: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        slices.append(texts)
        if len(slices) == 2:
            cancelled.set()  # as watch_disconnect does when the client goes away
        return loaded.encode_queries(texts)

    queue = UploadQueue(encode, 2, cancelled)
    rows = b"term\n" + b"".join(f"term {i}\n".encode() for i in range(200))
    with pytest.raises(UploadCancelled, match="client went away"):
        map_upload(
            io.BytesIO(rows),
            "t.csv",
            build_strategy(space, "o-t"),
            queue,
            RowOptions(),
            UploadLimits(1000, 10),
        )
    assert len(slices) == 2  # 100 slices without the stop
