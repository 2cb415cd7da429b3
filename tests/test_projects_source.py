"""Bad source lists are clear errors that store nothing: missing columns, duplicate codes
(listed), empty texts, non-numeric frequencies, a project that exists, a source file that
changed under its project."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from _project_fixtures import CODES, write_codes
from termnorm.errors import (
    DuplicateCodesError,
    InputFormatError,
    ProjectExistsError,
    ProjectNotFoundError,
    SourceChangedError,
)
from termnorm.projects import PipelineSettings, init_project, run_project, status
from termnorm.projects.source import read_source


def _refused(
    tmp_path: Path,
    rows: list[tuple[str, str, str, str]],
    match: str,
    error: type[Exception] = InputFormatError,
    **columns: str,
) -> None:
    source = write_codes(tmp_path / "bad.csv", rows)
    args = {"code_column": "code", "text_column": "label", "frequency_column": "count", **columns}
    with pytest.raises(error, match=match):
        init_project("p", source, db=tmp_path / "p.db", **args)  # type: ignore[arg-type]
    with pytest.raises(ProjectNotFoundError):  # nothing was stored
        status("p", db=tmp_path / "p.db")


def test_duplicate_codes_are_listed_with_their_rows(tmp_path: Path) -> None:
    rows = [*CODES, ("L001", "MI", "1", ""), ("L004", "asthma", "1", "")]
    _refused(
        tmp_path,
        rows,
        r"2 code\(s\) on more than one row: 'L001' \(rows 1, 8\), 'L004' \(rows 4, 9\)",
        DuplicateCodesError,
    )


def test_empty_texts_and_codes_name_their_rows(tmp_path: Path) -> None:
    _refused(
        tmp_path, [*CODES, ("L010", "  ", "1", "")], r"empty 'label' on data row\(s\) 8 \(L010\)"
    )
    _refused(tmp_path, [*CODES, ("", "asthma", "1", "")], r"empty 'code' on data row\(s\) 8")


def test_missing_columns_list_the_file_s_columns(tmp_path: Path) -> None:
    _refused(
        tmp_path,
        CODES,
        r"no column 'name'; columns are \['code', 'label', 'count', 'unit'\]",
        text_column="name",
    )


def test_a_frequency_must_be_a_number(tmp_path: Path) -> None:
    _refused(
        tmp_path,
        [*CODES, ("L010", "asthma", "often", "")],
        r"'count' is not a non-negative number on data row\(s\) 8 \('often'\)",
    )


def test_read_source_keeps_frequency_and_context(tmp_path: Path) -> None:
    spec, entries = read_source(
        write_codes(tmp_path / "c.csv"), "code", "label", "count", ("unit",)
    )
    assert len(spec.sha256) == 16 and spec.columns == ["code", "label", "count", "unit"]
    assert entries[1].frequency == 300.0 and entries[1].context == {"unit": "mmHg"}


def test_init_twice_is_refused_and_names_map_apply(tmp_path: Path) -> None:
    source, db = write_codes(tmp_path / "codes.csv"), tmp_path / "p.db"
    init_project("p", source, "code", "label", db=db)
    with pytest.raises(ProjectExistsError, match=r"already exists .* with this very file"):
        init_project("p", source, "code", "label", db=db)
    write_codes(source, CODES[:3])
    with pytest.raises(ProjectExistsError, match=r"this file differs .* termnorm map apply p"):
        init_project("p", source, "code", "label", db=db)


def test_a_source_changed_under_its_project_stops_a_run(tmp_path: Path) -> None:
    source, db = write_codes(tmp_path / "codes.csv"), tmp_path / "p.db"
    init_project("p", source, "code", "label", settings=PipelineSettings(), db=db)
    write_codes(source, CODES[:3])

    def never(*_args: object) -> None:
        raise AssertionError("no matcher is built for a refused run")

    with pytest.raises(
        SourceChangedError, match=r"changed since project 'p' read it .* map apply p"
    ):
        run_project("p", never, db=db, show_progress=False)  # type: ignore[arg-type]
    assert status("p", db=db).source_changed is not None
    assert status("p", db=db).states["to_map"] == len(CODES)  # the stored rows are untouched


def test_settings_round_trip_through_the_row_and_refuse_unknown_keys(tmp_path: Path) -> None:
    settings = PipelineSettings.of(
        index=tmp_path / "idx", synonyms=[tmp_path / "s.tsv"], k=3, max_chars=40, theta=0.7
    )
    row = SimpleNamespace(**settings.to_row())
    assert row.settings == {"k": 3} and row.spec == settings.spec.to_dict()
    assert PipelineSettings.from_row(row) == settings  # type: ignore[arg-type]
    assert settings.spec.index == (tmp_path / "idx").resolve()
    assert settings.spec.synonyms == ((tmp_path / "s.tsv").resolve(),)
    bad_spec = SimpleNamespace(spec={**row.spec, "fusion": 0.5}, settings=row.settings)
    with pytest.raises(ValueError, match=r"unknown option\(s\) fusion for a project's pipeline"):
        PipelineSettings.from_row(bad_spec)  # type: ignore[arg-type]
    bad_setting = SimpleNamespace(spec=row.spec, settings={"k": 3, "queue": 9})
    with pytest.raises(ValueError, match=r"unknown project setting\(s\) queue .*known: k"):
        PipelineSettings.from_row(bad_setting)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="drop --ranker"):
        PipelineSettings.of(ranker="r", combiner="c")
    with pytest.raises(ValueError, match="k must be at least 1"):
        PipelineSettings(k=0)
