"""``termnorm map``: the commands call the library and print one line or ``--json``; errors
are one line on stderr and exit 1."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import typer

from _cli import command_app, heavy_modules_after_registering, run_main
from _project_fixtures import CODES, build_index, write_codes
from termnorm.cli import map_cmd
from termnorm.search.build import clear_caches
from termnorm.search.spec import PipelineSpec


@pytest.fixture(autouse=True)
def fresh_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_caches()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TERMNORM_PROJECT_DB", raising=False)
    monkeypatch.chdir(tmp_path)  # the default database is PROJECT.termnorm.db here


def test_map_round_trip(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = build_index(tmp_path, tiny_bert_path)
    source = write_codes(tmp_path / "codes.csv")
    init = ["map", "init", "labs", "--source", str(source), "--code-column", "code"]
    init += ["--text-column", "label", "--frequency-column", "count", "--context-column", "unit"]
    code, out, err = run_main([*init, "--index", str(index), "-k", "3"], capsys)
    assert code == 0, err
    assert f"project labs: {len(CODES)} rows" in out and (tmp_path / "labs.termnorm.db").is_file()
    code, out, err = run_main(["map", "run", "labs", "--no-progress", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["mapped"] == len(CODES)
    code, out, err = run_main(["map", "status", "labs", "--json"], capsys)
    assert json.loads(out)["states"]["to_review"] == len(CODES)
    code, out, err = run_main(["map", "queue", "labs", "--limit", "2"], capsys)
    assert code == 0 and len(out.splitlines()) == 2, err
    code, out, err = run_main(["map", "show", "labs", "L001"], capsys)
    assert (
        code == 0 and "(to_review, version 2)" in out and "1. T:0001  myocardial infarction" in out
    )
    decide = ["map", "decide", "labs", "L001", "--approve", "--reviewer", "ann"]
    code, out, err = run_main([*decide, "--expect-version", "1"], capsys)
    assert code == 1 and err.count("\n") == 1
    assert "changed since version 1 (now version 2)" in err
    code, out, err = run_main([*decide, "--expect-version", "2", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["concept_id"] == "T:0001"
    code, out, err = run_main(
        ["map", "decide", "labs", "L002", "--approve", "--no-match", "--reviewer", "a"], capsys
    )
    assert code != 0 and "give one of" in err
    code, out, err = run_main(
        ["map", "auto-approve", "labs", "--min-score", "0.999", "--reviewer", "ann"], capsys
    )
    assert code == 0 and "rows auto-approved at 0.999" in out
    code, out, err = run_main(["map", "status", "labs"], capsys)
    assert code == 0 and "approved 1" in out and "1 learned synonyms" in out
    sssom = tmp_path / "labs.sssom.tsv"
    code, out, err = run_main(
        ["map", "export", "labs", "--format", "sssom", "--out", str(sssom)], capsys
    )
    assert code == 0, err
    assert "skos:exactMatch\tT:0001" in sssom.read_text()
    code, out, err = run_main(
        ["map", "apply", "labs", "--source", str(write_codes(tmp_path / "v2.csv", CODES[:5]))],
        capsys,
    )
    assert code == 0 and "5 unchanged, 0 changed and 0 new (to map), 2 retired" in out


def test_map_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_main(["map", "status", "nowhere"], capsys)
    assert code == 1 and "no project 'nowhere'" in err and "termnorm map init nowhere" in err
    dup = write_codes(tmp_path / "dup.csv", [*CODES, CODES[0]])
    args = [
        "map",
        "init",
        "p",
        "--source",
        str(dup),
        "--code-column",
        "code",
        "--text-column",
        "label",
    ]
    code, _out, err = run_main(args, capsys)
    assert code == 1 and "'L001' (rows 1, 8)" in err


def test_registering_map_imports_no_sqlalchemy() -> None:
    assert heavy_modules_after_registering(("sqlalchemy", "alembic", "torch")) == []


def test_map_init_takes_every_spec_option_and_map_run_searches_the_stored_spec(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = typer.main.get_command(command_app(map_cmd.register))
    init_cmd = group.commands["map"].commands["init"]  # type: ignore[attr-defined]
    assert {f.name for f in dataclasses.fields(PipelineSpec)} <= {p.name for p in init_cmd.params}
    index = build_index(tmp_path, tiny_bert_path)
    init = ["map", "init", "labs", "--source", str(write_codes(tmp_path / "codes.csv"))]
    init += ["--code-column", "code", "--text-column", "label", "--index", str(index), "-k", "2"]
    code, _out, err = run_main([*init, "--max-chars", "10", "--k-c", "4"], capsys)
    assert code == 0, err
    code, out, err = run_main(["map", "status", "labs", "--json"], capsys)
    status = json.loads(out)
    assert status["settings"] == {"k": 2} and status["spec"]["index"] == str(index.resolve())
    assert (status["spec"]["max_chars"], status["spec"]["k_c"]) == (10, 4)
    code, out, err = run_main(["map", "run", "labs", "--no-progress", "--json"], capsys)
    assert code == 0, err  # every text over 10 characters is refused: only "zzqx blorp" maps
    assert json.loads(out)["errors"] == sum(len(text) > 10 for _c, text, _f, _u in CODES) == 6
