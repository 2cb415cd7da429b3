"""What a mapping project refuses to store or run (issue 41): a pick must be a concept of the
project's index (bare IDs resolve, labels come from the index), thresholds stay in the range
of scores, no NUL character reaches either database, and the map commands' errors say what
to do (no empty database left behind, conflicts point to map show, long cells cut)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from _cli import run_main
from _project_crash import build
from _project_fixtures import CODES, build_index, postgres_url, project_db, write_codes  # noqa: F401
from termnorm import api
from termnorm.errors import DecisionError, InputFormatError, ReviewerError
from termnorm.projects import (
    PipelineSettings,
    add_reviewer,
    auto_approve,
    decide,
    export,
    init_project,
    run_project,
    status,
)
from termnorm.projects.leases import decide_leased
from termnorm.projects.models import DecisionRow, ProjectRow, SourceRow
from termnorm.projects.store import open_store
from termnorm.search.build import clear_caches


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, tiny_bert_path: Path) -> Path:
    return build_index(tmp_path_factory.mktemp("trust_index"), tiny_bert_path)


@pytest.fixture()
def labs(tmp_path: Path, index: Path) -> str:
    """:data:`CODES` over the tiny index, mapped (k 3); the SQLite database."""
    db = str(tmp_path / "labs.db")
    settings = PipelineSettings.of(index=index, k=3)
    init_project(
        "labs", write_codes(tmp_path / "codes.csv"), "code", "label", settings=settings, db=db
    )
    run_project("labs", api.project_matcher, db=db, show_progress=False)
    return db


@pytest.fixture()
def fake(tmp_path: Path, project_db: str) -> str:  # noqa: F811
    """:data:`CODES` mapped by the fake matcher (no index read) in ``project_db``."""
    init_project("p", write_codes(tmp_path / "c.csv"), "code", "label", db=project_db)
    run_project("p", build, db=project_db, show_progress=False)  # type: ignore[arg-type]
    return project_db


def _decisions(db: str, project: str = "labs") -> int:
    store = open_store(project, db)
    try:
        with store.session() as s:
            return len(s.scalars(select(DecisionRow)).all())
    finally:
        store.close()


# ------------------------------------------------------------- item 2: picks resolve
def test_a_pick_the_index_lacks_is_refused_and_nothing_is_written(labs: str) -> None:
    with pytest.raises(DecisionError, match=r"no concept 'MESH:D999999' in the project's index"):
        decide("labs", "L001", "pick", concept_id="MESH:D999999", reviewer="ann", db=labs)
    with pytest.raises(DecisionError, match=r"no concept 'X:1' in the project's index"):
        decide("labs", "L001", "flag", concept_id="X:1", reviewer="ann", db=labs)
    assert _decisions(labs) == 0


def test_a_bare_id_is_stored_as_the_indexs_own_id_and_name(labs: str, tmp_path: Path) -> None:
    record = decide("labs", "L005", "pick", concept_id="0008", reviewer="ann", db=labs)
    assert (record.concept_id, record.concept_name) == ("T:0008", "heart disease")
    out = tmp_path / "labs.sssom.tsv"
    export("labs", "sssom", out, db=labs)
    line = next(x for x in out.read_text().splitlines() if "\tT:0008\t" in x)
    assert "heart disease" in line and "CONCEPT:" not in out.read_text()


def test_a_client_name_that_is_not_the_indexs_is_refused(labs: str) -> None:
    """T:0004 is asthma: labelled 'influenza' it is refused; its own name (any case) is fine
    and the index's spelling is stored."""
    with pytest.raises(DecisionError, match=r"'influenza' is not the name of T:0004.*'asthma'"):
        decide_leased(
            "labs",
            "L005",
            "pick",
            reviewer="ann",
            version=2,
            concept_id="T:0004",
            concept_name="influenza",
            db=labs,
        )
    assert _decisions(labs) == 0
    record = decide_leased(
        "labs",
        "L005",
        "pick",
        reviewer="ann",
        version=2,
        concept_id="T:0004",
        concept_name=" Asthma ",
        db=labs,
    )
    assert (record.concept_id, record.concept_name) == ("T:0004", "asthma")


def test_map_decide_pick_of_an_unknown_concept_exits_1(
    labs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pick = ["map", "decide", "labs", "L001", "--pick", "MESH:D999999", "--reviewer", "ann"]
    code, _out, err = run_main([*pick, "--db", labs], capsys)
    assert code == 1 and "no concept 'MESH:D999999'" in err and "termnorm lookup" in err


# ------------------------------------------------------------- item 3: thresholds
def test_out_of_range_thresholds_are_refused_by_the_library(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    with pytest.raises(ValueError, match=r"--min-score 2: a score threshold must be in \[-1, 1\]"):
        init_project(
            "p",
            write_codes(tmp_path / "c.csv"),
            "code",
            "label",
            settings=PipelineSettings.of(min_score=2),
            db=db,
        )
    assert not db.exists()  # refused before any database was made
    init_project("p", write_codes(tmp_path / "c.csv"), "code", "label", db=db)
    run_project("p", build, db=db, show_progress=False)  # type: ignore[arg-type]
    for bad in (-5.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="a score threshold must be in"):
            auto_approve("p", bad, reviewer="ann", db=db)
        with pytest.raises(ValueError, match="a score threshold must be in"):
            status("p", db=db, min_score=bad)
    assert _decisions(str(db), "p") == 0


@pytest.mark.parametrize(
    "args",
    [
        ["map", "init", "p", "--code-column", "code", "--text-column", "label", "--min-score", "2"],
        ["map", "auto-approve", "p", "--min-score", "-5", "--reviewer", "ann"],
        ["map", "status", "p", "--min-score", "1.5"],
    ],
)
def test_map_commands_bound_min_score_as_normalize_does(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    extra = ["--source", str(write_codes(tmp_path / "c.csv"))] if args[1] == "init" else []
    code, _out, err = run_main([*args, *extra, "--db", str(db)], capsys)
    assert code == 2 and "Invalid value for '--min-score'" in err
    assert not db.exists()


# ------------------------------------------------------------- item 6: NUL characters
def test_no_nul_reaches_either_database(fake: str, tmp_path: Path) -> None:
    with pytest.raises(DecisionError, match=r"the comment holds a NUL character.*character 3"):
        decide("p", "L001", "comment", comment="abc\x00def", reviewer="ann", db=fake)
    with pytest.raises(DecisionError, match="the reviewer's name holds a NUL"):
        decide("p", "L001", "approve", reviewer="a\x00n", db=fake)
    with pytest.raises(DecisionError, match="the reviewer's name holds a NUL"):
        auto_approve("p", 0.5, reviewer="a\x00n", db=fake)
    with pytest.raises(ReviewerError, match="the reviewer's name holds a NUL"):
        add_reviewer("p", "bo\x00b", db=fake)
    assert _decisions(fake, "p") == 0
    rows = [*CODES[:2], ("L0\x009", "text", "1", ""), ("L010", "te\x00xt", "1", "u\x00")]
    with pytest.raises(InputFormatError, match=r"NUL character .* data row\(s\) 3 \(L0\?9\), 4"):
        init_project(
            "q",
            write_codes(tmp_path / "nul.csv", rows),
            "code",
            "label",
            context_columns=["unit"],
            db=fake,
        )


# ------------------------------------------------------------- item 11: the map commands
@pytest.fixture()
def here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    clear_caches()
    monkeypatch.delenv("TERMNORM_PROJECT_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_reads_a_latin1_list_with_errors_replace(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = here / "latin.csv"
    source.write_bytes("code,label\nA1,caf\xe9 au lait\nA2,tea\n".encode("latin-1"))
    init = ["map", "init", "p", "--source", str(source), "--code-column", "code"]
    init += ["--text-column", "label"]
    code, _out, err = run_main(init, capsys)
    assert code == 1 and "--errors replace" in err
    code, _out, err = run_main([*init, "--errors", "replace"], capsys)
    assert code == 0, err
    store = open_store("p", here / "p.termnorm.db")
    with store.session() as s:
        texts = s.scalars(select(SourceRow.text).order_by(SourceRow.id)).all()
        source_record = s.scalars(select(ProjectRow.source)).one()
    store.close()
    assert texts == ["caf\ufffd au lait", "tea"] and source_record["errors"] == "replace"


@pytest.mark.parametrize("command", [["status"], ["queue"], ["show", "-", "L1"], ["run"]])
def test_reading_a_project_that_is_not_there_makes_no_database(
    command: list[str], here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["map", command[0], "labz", *command[2:]]
    code, _out, err = run_main(args, capsys)
    assert code == 1 and "no project database" in err and "termnorm map init labz" in err
    assert list(here.iterdir()) == []


def test_a_database_that_cannot_be_made_says_where_and_what_to_do(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "afile").write_text("not a folder")
    init = ["map", "init", "p", "--source", str(write_codes(here / "c.csv")), "--code-column"]
    init += ["code", "--text-column", "label", "--db", str(here / "afile" / "p.db")]
    code, _out, err = run_main(init, capsys)
    assert code == 1 and err.count("\n") == 1
    assert f"cannot open or create the project database {here / 'afile' / 'p.db'}" in err
    assert "give --db a file in a folder you may write" in err


def test_a_conflict_points_to_map_show(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(here / "p.db")
    init_project("p", write_codes(here / "c.csv"), "code", "label", db=db)
    run_project("p", build, db=db, show_progress=False)  # type: ignore[arg-type]
    decide = ["map", "decide", "p", "L001", "--approve", "--reviewer", "ann", "--db", db]
    code, _out, err = run_main([*decide, "--expect-version", "1"], capsys)
    assert code == 1 and "termnorm map show p L001" in err and "map status" not in err


def test_map_queue_cuts_long_cells_and_json_keeps_them(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(here / "p.db")
    long = "x" * 5_000_000
    init_project(
        "p",
        write_codes(here / "c.csv", [("L1", long, "1", ""), ("L2", "a\tb", "1", "")]),
        "code",
        "label",
        db=db,
    )
    run_project("p", build, db=db, show_progress=False)  # type: ignore[arg-type]
    code, out, err = run_main(["map", "queue", "p", "--db", db], capsys)
    assert code == 0, err
    first, second = out.splitlines()
    assert first.startswith("L1\t" + "x" * 79 + "…\t") and len(first) < 200
    assert second.startswith("L2\ta b\t")
    code, out, err = run_main(["map", "queue", "p", "--db", db, "--json"], capsys)
    assert code == 0 and json.loads(out)["rows"][0]["text"] == long
