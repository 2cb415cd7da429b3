"""The normalize-file job spec (issue 53): one :class:`NormalizeFileSpec` built by every face
(CLI, API, service) and passed whole to the local and the Ray engine; a row option set once
reaches each face's output."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

import termnorm
from _cli import run_main
from _serve_fixtures import build_tiny_index, serving
from termnorm.engines import Engine
from termnorm.io.decoding import DecodeErrors
from termnorm.mentions.abbreviations import AbbreviationMode
from termnorm.search import batch, ray_batch
from termnorm.search.batch import BatchReport
from termnorm.search.file_spec import DEFAULT_CHUNK_ROWS, NormalizeFileSpec, RowOptions
from termnorm.search.spec import PipelineSpec


def test_the_spec_coerces_its_fields_and_refuses_bad_ones_before_any_work() -> None:
    job = NormalizeFileSpec.of(
        "in.csv", "out.csv", k=3, abbreviations="none", errors="replace", engine="ray"
    )
    assert (job.input, job.output) == (Path("in.csv"), Path("out.csv"))
    assert job.rows == RowOptions(k=3, abbreviations=AbbreviationMode.NONE)
    assert (job.errors, job.engine) == (DecodeErrors.REPLACE, Engine.RAY)
    assert NormalizeFileSpec.of("a", "b", chunk_rows=None, k=None).chunk_rows == DEFAULT_CHUNK_ROWS
    assert NormalizeFileSpec.of("a", "b").rows.k == 1
    with pytest.raises(ValueError, match="chunk_rows must be at least 1, got 0"):
        NormalizeFileSpec.of("a", "b", chunk_rows=0)
    with pytest.raises(ValueError, match="--workers must be at least 1, got 0"):
        NormalizeFileSpec.of("a", "b", workers=0)
    with pytest.raises(ValueError, match="'hex' is not a text encoding"):
        NormalizeFileSpec.of("a", "b", encoding="hex")
    with pytest.raises(ValueError, match="k must be at least 1, got 0"):
        RowOptions(k=0)
    with pytest.raises(TypeError, match="colum"):
        NormalizeFileSpec.of("a", "b", colum="term")


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("file_spec"), tiny_bert_path)


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, seen: list[Any]) -> None:
    """Record the job each call of ``module.name`` gets, then run it."""
    real = getattr(module, name)

    def spy(matcher: Any, job: NormalizeFileSpec, *args: Any, **kwargs: Any) -> BatchReport:
        seen.append(job)
        return real(matcher, job, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(module, name, spy)


def _header(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[0].split(",")


def test_a_row_option_set_once_reaches_every_faces_output(
    index_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src = tmp_path / "in.csv"
    src.write_text("id,term\n1,heart attack\n2,bronchial asthma\n", encoding="utf-8")
    seen: list[NormalizeFileSpec] = []
    _spy(monkeypatch, batch, "normalize_file", seen)

    code, _, err = run_main(
        [
            *("normalize", "--index", str(index_dir), "--input", str(src)),
            *("--output", str(tmp_path / "cli.csv"), "-k", "2", "--prefix", "tn_"),
        ],
        capsys,
    )
    assert code == 0, err
    assert _header(tmp_path / "cli.csv")[2:5] == ["tn_concept_id", "tn_concept_name", "tn_score"]
    assert "tn_candidates" in _header(tmp_path / "cli.csv")
    termnorm.normalize_file(src, tmp_path / "api.csv", index=index_dir, k=2, show_progress=False)
    assert "candidates" in _header(tmp_path / "api.csv")
    assert [type(job) for job in seen] == [NormalizeFileSpec, NormalizeFileSpec]
    assert [(job.rows.k, job.rows.prefix) for job in seen] == [(2, "tn_"), (2, None)]
    assert seen[1].pipeline == PipelineSpec(index=index_dir)

    ray_jobs: list[Any] = []

    def on_ray(factory: Any, job: NormalizeFileSpec, settings: Any, multi: bool) -> BatchReport:
        ray_jobs.append((job, settings))
        return BatchReport(job.input, job.output, "term")

    monkeypatch.setattr(ray_batch, "normalize_file_ray", on_ray)
    monkeypatch.setattr(ray_batch, "import_ray", lambda: None)
    source = tmp_path / "in.parquet"
    termnorm.normalize_file(source, tmp_path / "ray", index=index_dir, k=2, engine="ray")
    code, _, err = run_main(
        [
            *("normalize", "--index", str(index_dir), "--input", str(source)),
            *("--output", str(tmp_path / "ray"), "-k", "2", "--engine", "ray", "--workers", "3"),
        ],
        capsys,
    )
    assert code == 0, err
    assert [(job.rows.k, job.engine, job.workers) for job, _ in ray_jobs] == [
        (2, Engine.RAY, 1),
        (2, Engine.RAY, 3),
    ]
    assert all(settings["index"] == str(index_dir.resolve()) for _, settings in ray_jobs)


def test_the_service_passes_the_forms_row_options_in_the_spec(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("python_multipart")
    from termnorm.serve import uploads

    seen: list[NormalizeFileSpec] = []
    _spy(monkeypatch, uploads, "normalize_file", seen)
    with serving(index_dir, max_k=10) as client:
        data = b"id,term\n1,heart attack\n2,bronchial asthma\n"
        form = {"k": "2", "column": "term"}
        answer = client.post("/v1/normalize/file", files={"file": ("t.csv", data)}, data=form)
    assert answer.status_code == 200, answer.text
    rows = list(csv.DictReader(io.StringIO(answer.content.decode())))
    assert len(rows) == 2 and rows[0]["candidates"].startswith("[")
    assert [(job.rows.column, job.rows.k, job.show_progress) for job in seen] == [
        ("term", 2, False)
    ]
