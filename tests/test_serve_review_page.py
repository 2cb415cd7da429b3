"""The review page in a real headless Chromium (Playwright): a reviewer signs in with a
token, approves, picks another candidate, marks no match, picks a concept searched by hand
and flags a row, all from the keyboard; the queue advances and the database holds each
decision under the reviewer's name. A row changed meanwhile shows what changed. What is
hidden is not shown (signed out, revoked token, queue done); a token opened in the tab signs
in; a refused next row says why and offers to start over; the candidates are in the Tab
order; long texts stay in their columns. The tests skip, saying why, where no Chromium or
Playwright is installed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from sqlalchemy import select

from _project_fixtures import CODES, build_index, write_codes
from _serve_fixtures import chromium, live_server
from termnorm import api
from termnorm.projects import (
    PipelineSettings,
    acquire,
    add_reviewer,
    decide,
    init_project,
    release,
    remove_reviewer,
    review_queue,
    run_project,
    show_row,
)
from termnorm.projects.models import DecisionRow, LeaseRow, SourceRow
from termnorm.projects.store import open_store
from termnorm.serve import create_app
from termnorm.serve.review_schemas import MAX_SKIP


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, tiny_bert_path: Path) -> Path:
    chromium()  # skip before building anything for nothing
    pytest.importorskip("playwright.sync_api")
    return build_index(tmp_path_factory.mktemp("review_page"), tiny_bert_path)


@pytest.fixture()
def project(request: pytest.FixtureRequest, tmp_path: Path, index: Path) -> dict[str, Any]:
    """The code list over the tiny index (:data:`CODES` with their unit, or the rows and
    context column a test passes as ``indirect`` parameter), mapped; its database and ann's
    token."""
    db = str(tmp_path / "labs.db")
    settings = PipelineSettings.of(index=index, k=3)
    rows, context = getattr(request, "param", (CODES, "unit"))
    codes = write_codes(tmp_path / "codes.csv", rows, context)
    init_project("labs", codes, "code", "label", "count", [context], settings, db=db)
    run_project("labs", api.project_matcher, db=db, show_progress=False)
    return {"db": db, "token": add_reviewer("labs", "ann", db=db).token}


@pytest.fixture()
def served(index: Path, project: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    """A blank Chromium tab and the URL of the service of the project."""
    from playwright.sync_api import sync_playwright

    app = create_app(index, project="labs", project_db=project["db"])
    with live_server(app) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield browser.new_page(), url
        browser.close()


@pytest.fixture()
def page(served: tuple[Any, str], project: dict[str, Any]) -> Any:
    """The review page, signed in as ann (``/review#token=TOKEN``)."""
    tab, url = served
    tab.goto(f"{url}/review#token={project['token']}")
    return tab


def _trail(db: str) -> list[tuple[Any, ...]]:
    store = open_store("labs", db)
    try:
        with store.session() as s:
            query = (
                select(
                    SourceRow.code,
                    DecisionRow.reviewer,
                    DecisionRow.action,
                    DecisionRow.concept_id,
                    DecisionRow.predicate,
                    DecisionRow.comment,
                )
                .join(SourceRow, SourceRow.id == DecisionRow.row_id)
                .order_by(DecisionRow.id)
            )
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
    expect(page.locator("#row")).to_contain_text("for you until")
    page.keyboard.press("a")
    conflict = page.get_by_role("alert").filter(has_text="Changed meanwhile")
    expect(conflict).to_contain_text("bob: no_match")
    expect(page.locator("#row-facts")).to_contain_text("no_match, version")
    expect(page.locator("#row")).not_to_contain_text("for you until")  # no stale reservation
    expect(page.locator("#queue-total")).to_contain_text("6 rows")  # the queue reloaded
    expect(page.locator(f'#queue li[data-code="{first}"]')).to_have_count(0)
    assert [t[1:3] for t in _trail(db)] == [("bob", "no_match")]  # ann's approve not written
    page.keyboard.press("s")  # move on
    expect(page.locator("#row-title")).not_to_contain_text(first)


def test_a_row_another_reviewer_took_is_no_longer_shown_as_reserved(
    page: Any, project: dict[str, Any]
) -> None:
    from playwright.sync_api import expect

    db = project["db"]
    first = review_queue("labs", db=db, reviewer="ann", limit=1)[0].code
    expect(page.locator("#row")).to_contain_text("for you until")
    release("labs", first, "ann", db=db)  # ann's lease ran out, bob took the row
    acquire("labs", first, "bob", db=db)
    page.keyboard.press("a")
    expect(page.locator("#conflict")).to_contain_text("being reviewed by bob")
    expect(page.locator("#row")).not_to_contain_text("for you until")
    expect(page.locator("#queue-total")).to_contain_text("6 rows")  # bob's row left out
    expect(page.locator(f'#queue li[data-code="{first}"]')).to_have_count(0)
    assert _trail(db) == []


def test_signed_out_the_page_shows_the_sign_in_form_alone(served: tuple[Any, str]) -> None:
    from playwright.sync_api import expect

    tab, url = served
    tab.goto(f"{url}/review")  # no token
    expect(tab.locator("#signin-form")).to_be_visible()
    expect(tab.locator("#desk")).to_be_hidden()


def test_a_revoked_token_signs_out_and_hides_the_row(page: Any, project: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    db = project["db"]
    first = review_queue("labs", db=db, reviewer="ann", limit=1)[0].code
    expect(page.locator("#row-title")).to_contain_text(first)
    remove_reviewer("labs", "ann", db=db)
    page.keyboard.press("a")
    expect(page.locator("#signin-error")).to_contain_text("missing or unknown reviewer token")
    expect(page.locator("#signin-form")).to_be_visible()
    expect(page.locator("#desk")).to_be_hidden()
    expect(page.locator("#row-title")).to_be_hidden()
    assert _trail(db) == []


def test_the_queue_done_hides_the_decision_form(page: Any, project: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    db = project["db"]
    queue = [e.code for e in review_queue("labs", db=db, limit=100)]
    expect(page.locator("#row-title")).to_contain_text(queue[0])
    for code in queue[1:]:  # bob decides the others meanwhile
        decide("labs", code, "no_match", reviewer="bob", db=db)
    page.keyboard.press("s")  # ann skips the last one
    expect(page.locator("#row-title")).to_have_text("Queue done")
    expect(page.locator("#row-empty")).to_be_visible()
    for gone in ("#decide-form", "#row-facts", "#candidates", "#history"):
        expect(page.locator(gone)).to_be_hidden()
    restart = page.get_by_role("button", name="Start the queue over")  # the skipped row back
    expect(restart).to_be_visible()
    page.keyboard.press("r")
    expect(page.locator("#row-title")).to_contain_text(queue[0])
    expect(restart).to_be_hidden()


def test_a_token_given_in_the_address_of_an_open_tab_signs_in(
    served: tuple[Any, str], project: dict[str, Any]
) -> None:
    from playwright.sync_api import expect

    tab, url = served
    tab.goto(f"{url}/review")
    expect(tab.locator("#signin-form")).to_be_visible()
    tab.evaluate("window.notReloaded = true")
    tab.goto(f"{url}/review#token={project['token']}")  # the same document: no reload
    expect(tab.get_by_role("status").first).to_contain_text("Reviewing as ann: 7 rows")
    expect(tab.locator("#desk")).to_be_visible()
    expect(tab.locator("#signin")).to_be_hidden()
    assert tab.evaluate("window.notReloaded") is True
    assert "token" not in tab.url


def test_the_skip_limit_is_shown_with_a_way_on(page: Any, project: dict[str, Any]) -> None:
    from playwright.sync_api import Route, expect

    def after_many_skips(route: Route) -> None:
        """As if the page had skipped MAX_SKIP rows before: the server's own 422."""
        body = json.loads(route.request.post_data or "{}")
        if body["skip"]:
            body["skip"] += [f"X{i}" for i in range(MAX_SKIP)]
        route.continue_(post_data=json.dumps(body))

    first = review_queue("labs", db=project["db"], reviewer="ann", limit=1)[0].code
    expect(page.locator("#row-title")).to_contain_text(first)
    page.route("**/v1/review/next", after_many_skips)
    page.keyboard.press("s")
    alert = page.get_by_role("alert").filter(has_text="not given")
    expect(alert).to_contain_text(f"at most {MAX_SKIP} items")
    restart = page.get_by_role("button", name="Start the queue over")
    expect(restart).to_be_focused()
    expect(page.locator("#decide-form")).to_be_hidden()
    page.keyboard.press("Enter")  # the skipped rows come back
    expect(page.locator("#row-title")).to_contain_text(first)
    expect(alert).to_be_hidden()
    expect(restart).to_be_hidden()


def test_the_candidates_are_in_the_tab_order(page: Any, project: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    db = project["db"]
    first = review_queue("labs", db=db, reviewer="ann", limit=1)[0].code
    names = [c["name"] for c in show_row("labs", first, db=db).candidates]
    expect(page.locator("#row-title")).to_contain_text(first)
    page.locator("#row-title").focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("option", name=f"1. {names[0]}")).to_be_focused()
    page.keyboard.press("ArrowDown")  # the focus moves with the selection
    second = page.get_by_role("option", name=f"2. {names[1]}")
    expect(second).to_be_focused()
    expect(second).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Tab")  # one stop for the list: on to the predicate
    expect(page.get_by_role("radio", name="exact")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(second).to_be_focused()
    page.keyboard.press("Enter")  # choose it
    expect(page.locator("#row-title")).not_to_contain_text(first)
    picked = show_row("labs", first, db=db).candidates[1]["concept_id"]
    assert _trail(db) == [(first, "ann", "pick", picked, "exact", None)]


LONG = "X" * 400  # one unbroken word, far wider than a column
LONG_COLUMN = "patient_reported_outcome_measure_of_the_laboratory_information_system_export"


@pytest.mark.parametrize(
    "project", [([*CODES, ("L999", LONG, "100000", LONG)], LONG_COLUMN)], indirect=True
)
def test_long_unbroken_texts_stay_in_their_columns(page: Any, project: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#row-title")).to_contain_text(LONG)  # the first row of the queue
    expect(page.locator("#row-facts")).to_contain_text(LONG_COLUMN)  # its context column
    expect(page.locator("#queue li").first).to_contain_text(LONG)
    expect(page.locator("#concept")).to_be_visible()
    for width in (1280, 400):  # side by side, then one column (a phone)
        page.set_viewport_size({"width": width, "height": 900})
        for box in ("#queue-section", "#queue", "#row", "#row-title", "#row-facts", "body"):
            scroll, client = page.locator(box).evaluate("e => [e.scrollWidth, e.clientWidth]")
            assert scroll <= client, (width, box, scroll, client)
        queue = page.locator("#queue-section").bounding_box()
        item = page.locator("#queue li").first.bounding_box()
        assert item["x"] + item["width"] <= queue["x"] + queue["width"] + 0.5, width
        page_width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert page_width[0] <= page_width[1], (width, page_width)
