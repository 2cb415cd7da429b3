"""The review queue (frequency × uncertainty, leased rows left out) and one row's view."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from _project_fixtures import fake_mapped
from termnorm.projects import decide, review_queue, show_row
from termnorm.projects.models import LeaseRow, SourceRow, utcnow
from termnorm.projects.states import RowState
from termnorm.projects.store import open_store


def _project(tmp_path: Path) -> Path:
    return Path(fake_mapped(tmp_path, tmp_path / "p.db"))


def test_the_queue_puts_frequent_uncertain_rows_first_and_skips_leased_ones(tmp_path: Path) -> None:
    db = _project(tmp_path)
    queue = review_queue("p", db=db)
    # priorities: R1 10*0.5=5, R2 1*0.8=0.8, R3 1*0.1=0.1 (no frequency: 1), R4 100*0=0
    assert [e.code for e in queue] == ["R1", "R2", "R3", "R4"]
    assert queue[0].priority == 5.0 and queue[2].frequency is None
    store = open_store("p", db)
    with store.session(write=True) as s:
        r1 = s.scalars(select(SourceRow.id).where(SourceRow.code == "R1")).one()
        s.add(LeaseRow(row_id=r1, reviewer="bob", expires_at=utcnow() + timedelta(minutes=5)))
    store.close()
    assert [e.code for e in review_queue("p", db=db, reviewer="ann")] == ["R2", "R3", "R4"]
    assert review_queue("p", db=db, reviewer="bob")[0].code == "R1"
    decide("p", "R2", "flag", reviewer="ann", comment="ask cardiology", db=db)
    assert [e.code for e in review_queue("p", db=db, states=(RowState.FLAGGED,))] == ["R2"]


def test_show_row_has_the_version_candidates_and_history(tmp_path: Path) -> None:
    db = _project(tmp_path)
    decide("p", "R4", "approve", reviewer="ann", db=db)
    decide("p", "R4", "pick", concept_id="T:0002", reviewer="bob", db=db)
    row = show_row("p", "R4", db=db)
    assert (row.state, row.version, len(row.candidates)) == ("approved", 4, 5)
    assert [d["action"] for d in row.decisions] == ["approve", "pick"]
    assert row.decisions[1]["replaces_decision_id"] == row.decisions[0]["id"]
