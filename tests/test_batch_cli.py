"""``termnorm normalize --input``: --prefix, --encoding/--errors, resuming and --restart, and
--engine ray without its extra, through the real entry point."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from _cli import run_main
from termnorm import api
from termnorm.io.resumable import PROGRESS_NAME, work_dir


@pytest.fixture()
def index_dir(tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path) -> Path:
    api.build_index(tiny_kg_dir, model=tiny_bert_path, out=tmp_path / "idx", show_progress=False)
    return tmp_path / "idx"


def test_prefix_encoding_errors_and_restart(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_bytes(b"term,error\nasthma,mine\ncaf\xe9,\n")
    base = ["normalize", "--index", str(index_dir), "--input", str(src), "--output", str(out)]
    code, _, err = run_main(base, capsys)
    assert code == 1 and "in.csv:3: bytes b'\\xe9' at byte 4 are not valid utf-8" in err
    assert "Traceback" not in err
    code, _, err = run_main([*base, "--encoding", "latin-1"], capsys)
    assert code == 1 and "already has column(s) error" in err and "--prefix termnorm_" in err
    code, stdout, _ = run_main([*base, "--errors", "replace", "--prefix", "tn_", "--json"], capsys)
    report = json.loads(stdout)
    assert code == 0 and (report["rows"], report["replaced_lines"]) == (2, [3])
    header = out.read_text().splitlines()[0]
    assert header == "term,error,tn_concept_id,tn_concept_name,tn_score,tn_matched_term,tn_error"

    # an unfinished job of other settings is refused by name; --restart starts over
    work = work_dir(out)
    work.mkdir()
    job = {"input": {}, "k": 7}
    (work / PROGRESS_NAME).write_text(json.dumps({"kind": "termnorm-parts", "job": job}))
    code, _, err = run_main([*base, "--encoding", "latin-1", "--prefix", "tn_"], capsys)
    assert code == 1 and "unfinished job with other settings" in err and "k: 7 → 1" in err
    code, stdout, _ = run_main(
        [*base, "--encoding", "latin-1", "--prefix", "tn_", "--restart"], capsys
    )
    assert code == 0 and "wrote 2 rows" in stdout and not work.exists()


def test_engine_ray_without_the_extra(
    index_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    src = tmp_path / "in.parquet"
    src.write_bytes(b"")
    code, _, err = run_main(
        [
            "normalize",
            "--index",
            str(index_dir),
            "--input",
            str(src),
            "--output",
            str(tmp_path / "out"),
            "--engine",
            "ray",
            "--workers",
            "2",
        ],
        capsys,
    )
    assert code == 1 and "pip install 'termnorm[ray]'" in err
