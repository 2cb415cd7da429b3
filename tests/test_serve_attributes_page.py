"""Concept attributes on the pages, in a real headless Chromium (Playwright): the review
page's candidates show LOINC's six axes in their order (Component, Property, Time, System,
Scale, Method) and OMOP's vocabulary and code, read out with the option; the selected
concept's details show them all; the search page's results and concept details do too, and
the Annotate tab's tooltip shows the chosen concept's. A concept without attributes shows
none, hostile values are shown as text (never run) and a very long one neither widens the
page nor the compact line. The tests skip, saying why, where no Chromium or Playwright is
installed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from _project_fixtures import write_codes
from _serve_fixtures import (
    HOSTILE,
    HOSTILE_NAME,
    build_tiny_index,
    chromium,
    live_server,
    make_attributed_kg,
)
from termnorm import api
from termnorm.projects import PipelineSettings, add_reviewer, init_project, run_project
from termnorm.serve import create_app

AXES = ["Component", "Property", "Time", "System", "Scale", "Method"]
LONG_SYSTEM = HOSTILE["system"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tiny_bert_path: Path) -> Iterator[Any]:
    """A Chromium tab, the service's URL over the attributed KG with a mapped project
    (every row's candidates are all five concepts) and ann's token."""
    chromium()  # skip before building anything for nothing
    sync_api = pytest.importorskip("playwright.sync_api")
    root = tmp_path_factory.mktemp("attributes_page")
    index = build_tiny_index(root, tiny_bert_path, make_attributed_kg())
    db = str(root / "labs.db")
    rows = [("G1", "glucose serum", "10", ""), ("H1", "hba1c hplc", "5", "")]
    settings = PipelineSettings.of(index=index, k=5)
    codes = write_codes(root / "codes.csv", rows)
    init_project("labs", codes, "code", "label", "count", settings=settings, db=db)
    run_project("labs", api.project_matcher, db=db, show_progress=False)
    token = add_reviewer("labs", "ann", db=db).token
    app = create_app(index, project="labs", project_db=db)
    with live_server(app) as url, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield browser.new_page(), url, token
        browser.close()


def _line(option: Any) -> list[tuple[str, str]]:
    """The (label, value) pairs of a candidate's compact attribute line."""
    pairs = option.locator(".attrs .attr").evaluate_all(
        "nodes => nodes.map(n => [n.querySelector('.attr-key').textContent,"
        " n.querySelector('.attr-value').textContent])"
    )
    return [tuple(p) for p in pairs]


def _not_run(tab: Any) -> None:
    """The hostile values were shown as text: no element made of them, nothing run."""
    assert tab.evaluate("window.__pwned") is None
    assert tab.locator("main script, main img, main b").count() == 0


def test_the_review_page_shows_the_candidates_attributes(served: Any) -> None:
    from playwright.sync_api import expect

    tab, url, token = served
    tab.goto(f"{url}/review#token={token}")
    options = tab.locator("#candidates .choice")
    expect(options).to_have_count(5)
    glucose = tab.locator("#candidates .choice[data-concept='LOINC:2345-7']")
    expect(glucose).to_have_count(1)
    assert _line(glucose) == [  # LOINC's order, not the KG's (alphabetical); no class, status
        ("Component", "Glucose"),
        ("Property", "MCnc"),
        ("Time", "Pt"),
        ("System", "Ser/Plas"),
        ("Scale", "Qn"),
    ]
    hba1c = tab.locator("#candidates .choice[data-concept='LOINC:17856-6']")
    assert [label for label, _ in _line(hba1c)] == AXES
    assert _line(hba1c)[-1] == ("Method", "HPLC")
    omop = tab.locator("#candidates .choice[data-concept='OMOP:4329847']")
    assert _line(omop) == [("Vocabulary", "SNOMED"), ("Code", "22298006")]
    expect(tab.locator("#candidates .choice[data-concept='X:0001'] .attrs")).to_have_count(0)
    # read out with the option: "Component: Glucose" (the colon is the style sheet's)
    expect(tab.get_by_role("option", name=re.compile("Component: Glucose"))).to_have_count(1)
    # hostile: shown as text, the long value cut in the line
    hostile = tab.locator("#candidates .choice[data-concept='X:0666']")
    expect(hostile.locator("strong")).to_have_text(HOSTILE_NAME)
    shown = dict(_line(hostile))
    assert shown["Component"] == "<script>window.__pwned=1</script>"
    assert shown["System"] == LONG_SYSTEM[:79] + "…"
    _not_run(tab)

    # the keyboard selects a candidate: its details show every attribute, whole
    index = int(hostile.get_attribute("id").rsplit("-", 1)[1])
    tab.locator("#row-title").focus()
    tab.keyboard.press(str(index + 1))
    expect(hostile).to_have_attribute("aria-selected", "true")
    expect(tab.locator("#concept-title")).to_contain_text("X:0666")
    details = tab.locator("#concept-attributes")
    expect(details).to_be_visible()
    expect(details.locator("dt")).to_have_text(["Component", "System", "<b>key</b>", "constructor"])
    expect(details.locator("dd")).to_have_text(
        [HOSTILE["component"], LONG_SYSTEM, HOSTILE["<b>key</b>"], HOSTILE["constructor"]]
    )
    _not_run(tab)
    for width in (1280, 400):  # the long value wraps in its column
        tab.set_viewport_size({"width": width, "height": 900})
        page_width = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert page_width[0] <= page_width[1], (width, page_width)
    # a concept without attributes: no attribute heading, no list
    panel = tab.locator("#candidates .choice[data-concept='X:0001']")
    tab.keyboard.press(str(int(panel.get_attribute("id").rsplit("-", 1)[1]) + 1))
    expect(tab.locator("#concept-title")).to_contain_text("X:0001")
    expect(tab.locator("#concept-attributes-title")).to_be_hidden()
    expect(details).to_be_hidden()
    # OMOP's: all five, vocabulary and code first
    omop.click()
    expect(tab.locator("#concept-title")).to_contain_text("OMOP:4329847")
    expect(details.locator("dt")).to_have_text(
        ["Vocabulary", "Code", "Domain", "Concept class", "Standard"]
    )


def test_the_search_page_shows_the_attributes(served: Any) -> None:
    from playwright.sync_api import expect

    tab, url, _ = served
    tab.goto(url)
    tab.get_by_label("Term", exact=True).fill("hba1c hplc")
    first = tab.locator("#results .result").first
    expect(first).to_have_attribute("data-concept", "LOINC:17856-6")
    assert [label for label, _ in _line(first)] == AXES
    # the button's name stays short; the attributes are its description
    expect(first).to_have_accessible_description(
        re.compile(r"Component: Hemoglobin A1c.*Method: HPLC")
    )
    first.focus()
    tab.keyboard.press("Enter")
    expect(tab.locator("#concept-title")).to_have_text(
        "Hemoglobin A1c/Hemoglobin.total in Blood by HPLC (LOINC:17856-6)"
    )
    facts = tab.locator("#concept-facts dt")
    expect(facts).to_have_text(["Semantic types", "Alternative IDs", *AXES, "Class", "Status"])
    tab.get_by_label("Term", exact=True).fill("hostile")
    hostile = tab.locator("#results .result[data-concept='X:0666']")
    expect(hostile.locator("strong")).to_have_text(HOSTILE_NAME)
    hostile.click()
    expect(tab.locator("#concept-facts dd").nth(2)).to_have_text(HOSTILE["component"])
    _not_run(tab)
    tab.get_by_label("Term", exact=True).fill("chem panel")
    panel = tab.locator("#results .result[data-concept='X:0001']")
    expect(panel).to_be_visible()
    assert panel.get_attribute("aria-describedby") is None
    expect(panel.locator(".attrs")).to_have_count(0)


def test_the_annotate_tab_shows_the_chosen_concepts_attributes(served: Any) -> None:
    from playwright.sync_api import expect

    tab, url, _ = served
    tab.goto(url)
    tab.get_by_role("tab", name="Annotate").click()
    tab.get_by_label("Text", exact=True).fill("Fasting glucose serum; a chem panel.")
    tab.get_by_role("button", name="Annotate").click()
    marks = tab.locator("mark.concept")
    expect(marks).to_have_count(2)
    marks.first.focus()
    tip = tab.locator(".tip").first
    expect(tip).to_be_visible()
    assert _line(tip) == [
        ("Component", "Glucose"),
        ("Property", "MCnc"),
        ("Time", "Pt"),
        ("System", "Ser/Plas"),
        ("Scale", "Qn"),
    ]
    expect(marks.first).to_have_accessible_description(re.compile("Component: Glucose"))
    marks.nth(1).focus()  # the panel has none
    expect(tab.locator(".tip").nth(1).locator(".attrs")).to_have_count(0)
