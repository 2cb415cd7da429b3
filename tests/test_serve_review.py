"""The review page's API (``termnorm serve --project``) on SQLite and PostgreSQL: a
reviewer's token is required and names the author, the queue is frequency × uncertainty,
``next`` leases rows and skips the ones leased to others, an expired lease can be taken,
two reviewers on one row get 409 with what changed, every decision is in the audit trail."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from fastapi.testclient import TestClient
from sqlalchemy import select, update

from _project_fixtures import QUEUE_ROWS, fake_mapped, postgres_url, project_db, write_codes  # noqa: F401
from _serve_fixtures import LOCAL, build_tiny_index, wait_ready
from termnorm.projects import add_reviewer, init_project
from termnorm.projects.models import DecisionRow, LeaseRow, SourceRow
from termnorm.projects.store import open_store
from termnorm.serve import create_app


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_review"), tiny_bert_path)


class Project:
    """A mapped project ``p`` in ``db`` with reviewers ann and bob (their tokens)."""

    def __init__(self, tmp_path: Path, db: str) -> None:
        self.db = str(fake_mapped(tmp_path, db))
        self.tokens = {name: add_reviewer("p", name, db=db).token for name in ("ann", "bob")}

    def session(self) -> Any:
        store = open_store("p", self.db)
        return _closing(store)

    @staticmethod
    def row_id(session: Any, code: str) -> int:
        return int(session.scalars(select(SourceRow.id).where(SourceRow.code == code)).one())

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}


class _closing:
    def __init__(self, store: Any) -> None:
        self.store = store

    def __enter__(self) -> Any:
        self.context = self.store.session(write=True)
        return self.context.__enter__()

    def __exit__(self, *exc: Any) -> None:
        try:
            self.context.__exit__(*exc)
        finally:
            self.store.close()


@pytest.fixture()
def project(tmp_path: Path, project_db: str) -> Project:  # noqa: F811
    return Project(tmp_path, project_db)


@pytest.fixture()
def client(index_dir: Path, project: Project) -> Iterator[TestClient]:
    app = create_app(index_dir, project="p", project_db=project.db)
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as c:
        wait_ready(c)  # a row's candidates carry attributes from the index
        yield c


def _next(client: TestClient, project: Project, name: str, **body: Any) -> dict[str, Any] | None:
    answer = client.post("/v1/review/next", json=body, headers=project.auth(name))
    assert answer.status_code == 200, answer.text
    row: dict[str, Any] | None = answer.json()["row"]
    return row


def test_the_api_needs_a_reviewer_token_and_serves_the_page(
    client: TestClient, project: Project
) -> None:
    for headers in ({}, {"Authorization": "Bearer tnr_not-a-token"}, {"Authorization": "x"}):
        answer = client.get("/v1/review/me", headers=headers)
        assert answer.status_code == 401 and answer.headers["WWW-Authenticate"] == "Bearer"
        assert "termnorm map reviewer add p NAME" in answer.json()["detail"][0]["msg"]
    assert client.post("/v1/review/next", json={}).status_code == 401
    me = client.get("/v1/review/me", headers=project.auth("bob")).json()
    assert me == {"reviewer": "bob", "project": "p", "lease_minutes": 10.0}
    page = client.get("/review")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for asset, kind in (("review.js", "javascript"), ("review.css", "text/css")):
        answer = client.get(f"/review/{asset}")
        assert answer.status_code == 200 and kind in answer.headers["content-type"]
    assert client.get("/review/index.html").status_code == 404
    assert "/v1/review/next" in client.get("/openapi.json").json()["paths"]


def test_the_queue_is_frequency_times_uncertainty(client: TestClient, project: Project) -> None:
    body = client.get("/v1/review/queue", headers=project.auth("ann")).json()
    assert [r["code"] for r in body["rows"]] == ["R1", "R2", "R3", "R4"]
    assert [round(r["priority"], 6) for r in body["rows"]] == [5.0, 0.8, 0.1, 0.0]
    assert (body["total"], body["flagged"]) == (4, False)
    limited = client.get("/v1/review/queue?limit=2", headers=project.auth("ann")).json()
    assert [r["code"] for r in limited["rows"]] == ["R1", "R2"] and limited["total"] == 4
    assert client.get("/v1/review/queue?limit=0", headers=project.auth("ann")).status_code == 422


def test_next_leases_rows_that_others_then_skip_and_an_expired_lease_is_taken(
    client: TestClient, project: Project
) -> None:
    first = _next(client, project, "ann")
    assert first is not None and first["code"] == "R1" and first["lease"]["reviewer"] == "ann"
    assert [c["rank"] for c in first["candidates"]] == [1, 2, 3, 4, 5]
    assert first["candidates"][0]["matched_text"] == "a"
    second = _next(client, project, "bob")
    assert second is not None and second["code"] == "R2"  # R1 is ann's
    queue = client.get("/v1/review/queue", headers=project.auth("bob")).json()
    assert [r["code"] for r in queue["rows"]] == ["R2", "R3", "R4"] and queue["total"] == 3
    skipped = _next(client, project, "ann", skip=["R1"])  # R1 given back, R2 is bob's
    assert skipped is not None and skipped["code"] == "R3"
    answer = client.delete("/v1/review/rows/R3/lease", headers=project.auth("ann"))
    assert answer.status_code == 204
    with project.session() as s:  # bob walks away: his lease on R2 expires
        s.execute(
            update(LeaseRow)
            .where(LeaseRow.row_id == project.row_id(s, "R2"))
            .values(expires_at=LeaseRow.expires_at - timedelta(hours=1))
        )
    taken = _next(client, project, "ann", skip=["R1"])
    assert taken is not None and taken["code"] == "R2" and taken["lease"]["reviewer"] == "ann"
    assert _next(client, project, "bob", skip=["R1", "R3", "R4"]) is None  # R2 is ann's now


def test_two_reviewers_on_one_row_get_409_with_what_changed(
    client: TestClient, project: Project
) -> None:
    ann, bob = project.auth("ann"), project.auth("bob")
    row = client.post("/v1/review/rows/R1/lease", headers=ann).json()
    version = row["version"]
    taken = client.post("/v1/review/rows/R1/lease", headers=bob)
    assert taken.status_code == 409 and taken.json()["lease"]["reviewer"] == "ann"
    assert taken.json()["detail"][0]["type"] == "leased"
    refused = client.post(
        "/v1/review/rows/R1/decisions", json={"action": "no_match", "version": version}, headers=bob
    )
    assert refused.status_code == 409
    assert refused.json()["detail"][0]["msg"].startswith("row 'R1' is being reviewed by ann")
    done = client.post(
        "/v1/review/rows/R1/decisions", json={"action": "approve", "version": version}, headers=ann
    )
    assert done.status_code == 200, done.text
    decided = done.json()
    assert (decided["reviewer"], decided["state"], decided["version"]) == (
        "ann",
        "approved",
        version + 1,
    )
    assert decided["concept_id"] == row["candidates"][0]["concept_id"]
    # bob decides on the version he saw: 409, the row as it is now, nothing written
    stale = client.post(
        "/v1/review/rows/R1/decisions",
        json={"action": "pick", "version": version, "concept_id": "T:0003"},
        headers=bob,
    )
    assert stale.status_code == 409
    conflict = stale.json()
    assert conflict["detail"][0]["type"] == "row_changed" and conflict["lease"] is None
    assert conflict["row"]["version"] == version + 1 and conflict["row"]["state"] == "approved"
    assert [d["reviewer"] for d in conflict["row"]["decisions"]] == ["ann"]
    with project.session() as s:
        assert len(s.scalars(select(DecisionRow)).all()) == 1
        assert s.scalars(select(LeaseRow)).all() == []  # the decision gave the lease back


def test_every_decision_is_in_the_audit_trail_under_the_tokens_reviewer(
    client: TestClient, project: Project
) -> None:
    ann, bob = project.auth("ann"), project.auth("bob")

    def decide(code: str, who: dict[str, str], **body: Any) -> Any:
        version = client.get(f"/v1/review/rows/{code}", headers=who).json()["version"]
        return client.post(
            f"/v1/review/rows/{code}/decisions", json={"version": version, **body}, headers=who
        )

    assert decide("R1", ann, action="comment", comment="unit is mg/dL").status_code == 200
    # a concept searched by hand: a bare ID resolves, the label is the index's
    picked = decide(
        "R1", ann, action="pick", concept_id="0007", concept_name="Anemia", predicate="narrow"
    )
    assert picked.status_code == 200
    assert (picked.json()["concept_id"], picked.json()["concept_name"]) == ("T:0007", "anemia")
    assert decide("R2", bob, action="no_match").status_code == 200
    assert decide("R3", bob, action="flag", comment="ask cardiology").status_code == 200
    flagged = client.get("/v1/review/queue?flagged=true", headers=ann).json()
    assert [r["code"] for r in flagged["rows"]] == ["R3"]
    second = _next(client, project, "ann", flagged=True)
    assert second is not None and second["code"] == "R3"
    assert decide("R3", ann, action="approve", predicate="broad").status_code == 200
    # the author is the token's reviewer: a body cannot name another one
    forged = decide("R4", ann, action="approve", reviewer="bob")
    assert forged.status_code == 422 and forged.json()["detail"][0]["loc"] == ["body", "reviewer"]
    assert decide("R4", ann, action="pick").status_code == 422  # pick needs a concept
    # a concept the index lacks, another concept's name (T:0004 is asthma), a NUL: 422
    for refused in (
        {"action": "pick", "concept_id": "MESH:D999999"},
        {"action": "pick", "concept_id": "T:0004", "concept_name": "Influenza"},
        {"action": "comment", "comment": "nul\u0000here"},
    ):
        answer = decide("R4", ann, **refused)
        assert answer.status_code == 422, answer.text
        assert answer.json()["detail"][0]["type"] == "decision_refused"
    assert decide("R4", ann, action="maybe").status_code == 422
    missing = client.post(
        "/v1/review/rows/NOPE/decisions", json={"action": "approve", "version": 1}, headers=ann
    )
    assert missing.status_code == 404 and missing.json()["detail"][0]["type"] == "unknown_code"
    with project.session() as s:
        trail = s.execute(
            select(
                SourceRow.code,
                DecisionRow.reviewer,
                DecisionRow.action,
                DecisionRow.predicate,
                DecisionRow.comment,
            )
            .join(SourceRow, SourceRow.id == DecisionRow.row_id)
            .order_by(DecisionRow.id)
        ).all()
    assert [tuple(t) for t in trail] == [
        ("R1", "ann", "comment", None, "unit is mg/dL"),
        ("R1", "ann", "pick", "narrow", None),
        ("R2", "bob", "no_match", None, None),
        ("R3", "bob", "flag", None, "ask cardiology"),
        ("R3", "ann", "approve", "broad", None),
    ]


def test_a_project_that_is_not_there_stops_the_start(index_dir: Path, tmp_path: Path) -> None:
    app = create_app(index_dir, project="nope", project_db=str(tmp_path / "none.db"))
    with pytest.raises(Exception, match="no project 'nope'"), TestClient(app, base_url=LOCAL):
        pass


def test_serve_project_takes_the_projects_index_and_reviewers_get_tokens(
    tmp_path: Path,
    index_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import uvicorn

    from _cli import run_main
    from termnorm.projects import PipelineSettings

    db = str(tmp_path / "labs.db")
    source = write_codes(tmp_path / "c.csv", QUEUE_ROWS)
    init_project(
        "labs", source, "code", "label", settings=PipelineSettings.of(index=index_dir), db=db
    )
    code, token, err = run_main(["map", "reviewer", "add", "labs", "ann", "--db", db], capsys)
    assert code == 0 and token.strip().startswith("tnr_") and "shown only now" in err
    code, _, err = run_main(["map", "reviewer", "add", "labs", "ann", "--db", db], capsys)
    assert code == 1 and "--rotate" in err
    code, out, _ = run_main(["map", "reviewer", "list", "labs", "--db", db, "--json"], capsys)
    assert code == 0 and '"name": "ann"' in out and token.strip() not in out
    started: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: started.append(application))
    code, _, err = run_main(
        ["serve", "--project", "labs", "--db", db, "--lease-minutes", "3"], capsys
    )
    assert code == 0, err
    settings = started[0].state.settings
    assert (settings.spec.index, settings.project, settings.project_db, settings.lease_minutes) == (
        index_dir,
        "labs",
        db,
        3.0,
    )
    code, _, err = run_main(["serve", "--project", "nope", "--db", db], capsys)
    assert code == 1 and "no project 'nope'" in err
    code, _, err = run_main(["serve", "--db", db], capsys)
    assert code == 2 and "--db needs --project" in err
    code, out, _ = run_main(["map", "reviewer", "remove", "labs", "ann", "--db", db], capsys)
    assert code == 0 and "their decisions stay" in out
