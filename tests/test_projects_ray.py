"""``map run --engine ray`` (issue 33): the search on Ray actors, the writes in the driver —
the same rows and candidates as the local engine, a worker's error by its message, and the
extra named when Ray is missing."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import select

from _cli import run_main
from _project_fixtures import build_index, write_codes
from termnorm import api
from termnorm.engines import RayWorkerError
from termnorm.errors import MissingExtraError, TermnormError
from termnorm.projects import PipelineSettings, init_project, run_project, status
from termnorm.projects.models import CandidateRow, SourceRow
from termnorm.projects.ray_run import _MatchActor
from termnorm.projects.store import open_store
from termnorm.search.candidate import RowMatcher
from termnorm.search.spec import PipelineSpec

ROWS = [
    (f"C{i:03d}", text, "1", "")
    for i, text in enumerate(
        [
            "heart attack",
            "high blood pressure",
            "sugar diabetes",
            "bronchial asthma",
            "zzqx blorp",
            "lung infection",
            "thyroid removal",
            "x" * 1200,
            "asthma attack",
            "heart disease",
            "fever",
        ]
        * 3
    )
]


def _candidates(db: Path) -> list[tuple[str, str, int, str, str, float]]:
    store = open_store("p", db)
    with store.session() as s:
        rows = s.execute(
            select(
                SourceRow.code,
                SourceRow.state,
                CandidateRow.rank,
                CandidateRow.concept_id,
                CandidateRow.matched_text,
                CandidateRow.score,
            )
            .outerjoin(CandidateRow, CandidateRow.row_id == SourceRow.id)
            .order_by(SourceRow.code, CandidateRow.rank)
        ).all()
    store.close()
    return [
        (c, st, r, cid, m, round(float(sc), 5) if sc is not None else sc)
        for c, st, r, cid, m, sc in rows
    ]  # type: ignore[misc]


def _project(tmp_path: Path, index: Path, name: str) -> Path:
    db = tmp_path / f"{name}.db"
    codes = write_codes(tmp_path / f"{name}.csv", ROWS)
    init_project("p", codes, "code", "label", settings=PipelineSettings.of(index=index, k=3), db=db)
    return db


def test_without_the_extra_it_says_which_to_install(
    tmp_path: Path, tiny_bert_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _project(tmp_path, build_index(tmp_path, tiny_bert_path), "p")
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray → ImportError
    with pytest.raises(MissingExtraError, match=r"pip install 'termnorm\[ray\]'"):
        run_project("p", api.project_matcher, db=db, engine="ray", show_progress=False)
    assert status("p", db=db).states["to_map"] == len(ROWS)  # nothing written
    with pytest.raises(ValueError, match="workers must be at least 1"):
        run_project("p", api.project_matcher, db=db, engine="ray", workers=0)


def test_the_cli_takes_the_engine_and_names_the_extra(
    tmp_path: Path,
    tiny_bert_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = _project(tmp_path, build_index(tmp_path, tiny_bert_path), "p")
    monkeypatch.setitem(sys.modules, "ray", None)
    args = [
        "map",
        "run",
        "p",
        "--db",
        str(db),
        "--engine",
        "ray",
        "--workers",
        "2",
        "--no-progress",
    ]
    code, _out, err = run_main(args, capsys)
    assert code != 0 and "termnorm[ray]" in err
    code, _out, err = run_main([*args[:4], str(db), "--engine", "spark"], capsys)
    assert code == 2 and "spark" in err


def test_an_actor_that_cannot_build_its_matcher_answers_why(tmp_path: Path) -> None:
    """The actor's code, in this process: its error travels as a message."""

    def broken(_s: PipelineSpec, _p: Sequence[tuple[str, str]]) -> RowMatcher:
        raise TermnormError("no index at /nowhere")

    actor = _MatchActor(broken, PipelineSpec(), [])
    assert actor.normalize_rows(["fever"], 3) == ([], "TermnormError: no index at /nowhere")


@pytest.mark.slow  # about a minute: Ray starts, and each actor imports torch and loads the index
def test_ray_maps_a_project_as_the_local_engine_does(
    local_ray: None, tmp_path: Path, tiny_bert_path: Path
) -> None:
    index = build_index(tmp_path, tiny_bert_path)
    local, ray = _project(tmp_path, index, "local"), _project(tmp_path, index, "ray")
    expected = run_project("p", api.project_matcher, db=local, batch_rows=4, show_progress=False)
    report = run_project(
        "p",
        api.project_matcher,
        db=ray,
        batch_rows=4,
        engine="ray",
        workers=2,
        show_progress=False,
    )
    assert (report.mapped, report.left) == (len(ROWS), 0)
    assert report.errors == expected.errors
    assert _candidates(ray) == _candidates(local)  # every row, candidate for candidate

    def broken(_s: PipelineSpec, _p: Sequence[tuple[str, str]]) -> RowMatcher:
        raise TermnormError("no index at /nowhere")

    again = _project(tmp_path, index, "again")
    with pytest.raises(RayWorkerError, match=r"a map run worker failed: .*no index at /nowhere"):
        run_project("p", broken, db=again, engine="ray", workers=2, show_progress=False)
    assert status("p", db=again).states["to_map"] == len(ROWS)
