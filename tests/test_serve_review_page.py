"""The review page in a real headless Chromium (Playwright): a reviewer signs in with a
token, approves, picks another candidate, marks no match, picks a concept searched by hand
and flags a row, all from the keyboard; the queue advances and the database holds each
decision under the reviewer's name. A row changed meanwhile shows what changed. The tests
skip, saying why, where no Chromium or Playwright is installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from sqlalchemy import select

from _project_fixtures import build_index, write_codes
from _serve_fixtures import chromium, live_server
from termnorm import api
from termnorm.projects import (
    PipelineSettings,
    add_reviewer,
    decide,
    init_project,
    review_queue,
    run_project,
    show_row,
)
from termnorm.projects.models import DecisionRow, LeaseRow, SourceRow
from termnorm.projects.store import open_store
from termnorm.serve import create_app


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, tiny_bert_path: Path) -> Path:
    chromium()  # skip before building anything for nothing
    pytest.importorskip("playwright.sync_api")
    return build_index(tmp_path_factory.mktemp("review_page"), tiny_bert_path)


@pytest.fixture()
def project(tmp_path: Path, index: Path) -> dict[str, Any]:
    """The code list over the tiny index, mapped; its database and ann's token."""
    db = str(tmp_path / "labs.db")
    settings = PipelineSettings.of(index=index, k=3)
    init_project("labs", write_codes(tmp_path / "codes.csv"), "code", "label", "count",
                 ["unit"], settings, db=db)  # fmt: skip
    run_project("labs", api.project_matcher, db=db, show_progress=False)
    return {"db": db, "token": add_reviewer("labs", "ann", db=db).token}


@pytest.fixture()
def page(index: Path, project: dict[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    app = create_app(index, project="labs", project_db=project["db"])
    with live_server(app) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        tab = browser.new_page()
        tab.goto(f"{url}/review#token={project['token']}")
        yield tab
        browser.close()


def _trail(db: str) -> list[tuple[Any, ...]]:
    store = open_store("labs", db)
    try:
        with store.session() as s:
            query = (
                select(SourceRow.code, DecisionRow.reviewer, DecisionRow.action,
                       DecisionRow.concept_id, DecisionRow.predicate, DecisionRow.comment)
                .join(SourceRow, SourceRow.id == DecisionRow.row_id)
                .order_by(DecisionRow.id)
            )  # fmt: skip
            return [tuple(r) for r in s.execute(query).all()]
    finally:
        store.close()


def test_a_reviewer_works_through_the_queue_from_the_keyboard(
    page: Any, project: dict[str, Any]
) -> None:
    from playwright.sync_api import expect

    db = project["db"]
    queue = [e.code for e in review_queue("labs", db=db, reviewer="ann", limit=10)]
    title = page.locator("#row-title")
    expect(page.get_by_role("status").first).to_contain_text("Reviewing as ann: 7 rows")
    assert "token" not in page.url  # the token is taken off the address bar
    expect(page.locator("#keys")).to_contain_text("approve the top candidate")
    # the first row: frequency × uncertainty first, its candidates with score bars
    expect(title).to_contain_text(queue[0])
    options = page.locator("#candidates .choice")
    expect(options).to_have_count(3)
    expect(options.first).to_have_attribute("aria-selected", "true")
    expect(options.first.locator(".matched")).to_contain_text("ontology")
    expect(page.locator("#concept-title")).to_contain_text(
        options.first.get_attribute("data-concept")
    )
    expect(page.locator("#queue li.current")).to_contain_text(queue[0])

    page.keyboard.press("a")  # approve the top candidate
    expect(title).to_contain_text(queue[1])
    second = show_row("labs", queue[1], db=db).candidates[1]["concept_id"]
    page.keyboard.press("2")  # select candidate 2, choose it
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")
    expect(title).to_contain_text(queue[2])
    page.keyboard.press("n")  # no match
    expect(title).to_contain_text(queue[3])
    # search by hand, narrow down to the result, broad predicate, choose it
    page.keyboard.press("/")
    page.keyboard.type("heart attack")
    page.keyboard.press("Enter")
    expect(page.locator("#search-results .choice").first).to_contain_text("T:0001")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    expect(title).to_contain_text(queue[4])
    # a comment, then flag for a second opinion
    page.keyboard.press("c")
    page.keyboard.type("ask the lab")
    page.keyboard.press("Escape")
    page.keyboard.press("f")
    expect(title).to_contain_text(queue[5])
    expect(page.get_by_role("status").first).to_contain_text("Reviewing as ann: 2 rows")

    trail = _trail(db)
    top = show_row("labs", queue[0], db=db).candidates[0]["concept_id"]
    assert trail == [
        (queue[0], "ann", "approve", top, "exact", None),
        (queue[1], "ann", "pick", second, "exact", None),
        (queue[2], "ann", "no_match", None, None, None),
        (queue[3], "ann", "pick", "T:0001", "broad", None),
        (queue[4], "ann", "flag", None, None, "ask the lab"),
    ]
    store = open_store("labs", db)
    try:
        with store.session() as s:  # the row shown is leased to ann, nothing else
            leases = s.execute(
                select(SourceRow.code, LeaseRow.reviewer).join(
                    SourceRow, SourceRow.id == LeaseRow.row_id
                )
            ).all()
        assert [tuple(r) for r in leases] == [(queue[5], "ann")]
    finally:
        store.close()


def test_a_row_changed_meanwhile_shows_what_changed(page: Any, project: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    db = project["db"]
    first = review_queue("labs", db=db, reviewer="ann", limit=1)[0].code
    expect(page.locator("#row-title")).to_contain_text(first)
    decide("labs", first, "no_match", reviewer="bob", db=db)  # from the CLI, say
    page.keyboard.press("a")
    conflict = page.get_by_role("alert").filter(has_text="Changed meanwhile")
    expect(conflict).to_contain_text("bob: no_match")
    expect(page.locator("#row-facts")).to_contain_text("no_match, version")
    assert [t[1:3] for t in _trail(db)] == [("bob", "no_match")]  # ann's approve not written
    page.keyboard.press("s")  # move on
    expect(page.locator("#row-title")).not_to_contain_text(first)
