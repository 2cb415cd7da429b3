"""The Annotate tab's marks and tooltips in a real headless Chromium (Playwright): a
direction control in the text reverses no mark, Escape hides a tooltip however it was shown,
one tooltip at a time and none over the text on a phone, buttons of at least 24 × 24 px.
The tests skip, saying why, where no Chromium or Playwright is installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from _serve_fixtures import build_tiny_index, chromium, live_server
from termnorm.serve import create_app


@pytest.fixture(scope="module")
def browser(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module, and the URL of a service over the tiny index."""
    executable = chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    index = build_tiny_index(tmp_path_factory.mktemp("annotate_tab"), tiny_bert_path)
    with live_server(create_app(index)) as url, sync_api.sync_playwright() as pw:
        chromium_browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield chromium_browser, url
        chromium_browser.close()


@pytest.fixture()
def page(browser: tuple[Any, str]) -> Iterator[Any]:
    """A fresh tab on the Annotate tab of the page."""
    from playwright.sync_api import expect

    chromium_browser, url = browser
    context = chromium_browser.new_context(viewport={"width": 1000, "height": 800})
    tab = context.new_page()
    tab.goto(url)
    expect(tab.get_by_role("status").first).to_contain_text("Ready")
    tab.get_by_role("tab", name="Annotate").click()
    yield tab
    context.close()


def _annotate(page: Any, text: str, marks: list[str]) -> Any:
    """The marks of ``text`` once annotated (their texts are ``marks``)."""
    from playwright.sync_api import expect

    page.get_by_label("Text", exact=True).fill(text)
    page.get_by_role("button", name="Annotate").click()
    found = page.locator("#annotated mark")
    expect(found).to_have_text(marks)
    return found


def _visible_tips(page: Any) -> list[str]:
    return page.locator("#annotated .tip:visible").evaluate_all("ts => ts.map(t => t.id)")


# the x of a mark's first and last character, as rendered
_ENDS = """m => {
  const text = m.firstChild, r = document.createRange();
  const x = (i) => { r.setStart(text, i); r.setEnd(text, i + 1); return r.getBoundingClientRect().x; };
  return [x(0), x(text.length - 1)];
}"""


def test_an_rlo_in_the_text_reverses_no_mark(page: Any) -> None:
    rlo = "\u202e"  # RIGHT-TO-LEFT OVERRIDE, never closed: the rest of the line is reversed
    marks = _annotate(page, f"Patient has {rlo}heart attack and asthma today.", ["heart attack", "asthma"])  # fmt: skip
    for i in range(2):
        mark = marks.nth(i)
        assert mark.evaluate("m => getComputedStyle(m).unicodeBidi") == "isolate"
        assert mark.evaluate("m => getComputedStyle(m.parentElement).unicodeBidi") == "isolate"
        first, last = mark.evaluate(_ENDS)
        assert first < last, mark.text_content()  # read left to right, as written
    tip = page.locator("#annotation-tip-0")  # the KG's and the document's texts isolated too
    assert tip.locator("strong > bdi").text_content() == "myocardial infarction"
    assert tip.locator(".tip-note > bdi").text_content() == "heart attack"


def test_escape_hides_a_tooltip_shown_by_the_pointer(page: Any) -> None:
    from playwright.sync_api import expect

    marks = _annotate(page, "Patient denies heart attack; history of asthma.", ["heart attack", "asthma"])  # fmt: skip
    tip = page.locator("#annotation-tip-1")
    page.get_by_label("Text", exact=True).focus()  # the focus is not on a mark
    marks.nth(1).hover()
    expect(tip).to_be_visible()
    page.keyboard.press("Escape")
    expect(tip).to_be_hidden()
    page.mouse.move(0, 0)
    marks.nth(1).hover()  # shown again by pointing again
    expect(tip).to_be_visible()


def test_the_pointer_can_move_onto_a_tooltip(page: Any) -> None:
    from playwright.sync_api import expect

    marks = _annotate(page, "Patient denies heart attack; history of asthma.", ["heart attack", "asthma"])  # fmt: skip
    tip = page.locator("#annotation-tip-0")
    marks.nth(0).hover()
    expect(tip).to_be_visible()
    box = marks.nth(0).bounding_box()
    assert box is not None
    x = box["x"] + box["width"] / 2
    page.mouse.move(x, box["y"] + box["height"] + 6, steps=6)  # down, through no gap
    expect(tip).to_be_visible()
    tip.hover()
    expect(tip).to_be_visible()


# the number of text boxes of the document that each shown tooltip covers
_COVERED = """root => {
  const rects = [];
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.parentElement.closest(".tip") || !n.textContent.trim()) continue;
    const r = document.createRange();
    r.selectNodeContents(n);
    rects.push(...r.getClientRects());
  }
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  return [...root.querySelectorAll(".tip")].filter((t) => !t.hidden)
    .map((t) => rects.filter((r) => meet(t.getBoundingClientRect(), r)).length);
}"""

LONG = (
    "History of asthma since childhood, treated with inhalers; the patient now reports chest "
    "pain at rest and was admitted for a heart attack last year, with diabetes mellitus."
)


def test_on_a_phone_one_tooltip_shows_and_it_covers_no_text(page: Any) -> None:
    from playwright.sync_api import expect

    page.set_viewport_size({"width": 400, "height": 800})
    marks = _annotate(page, LONG, ["asthma", "heart attack", "diabetes mellitus"])
    page.mouse.move(0, 0)
    marks.nth(0).focus()  # the first line's mark: lines of text follow it
    expect(page.locator("#annotation-tip-0")).to_be_visible()
    annotated = page.locator("#annotated")
    assert annotated.evaluate(_COVERED) == [0]
    marks.nth(1).hover()  # pointing at another: still one tooltip, over no text
    page.wait_for_timeout(200)  # the pointer's enter and leave events after the layout moved
    assert len(_visible_tips(page)) <= 1
    assert set(annotated.evaluate(_COVERED)) <= {0}
    scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll <= inner == 400  # no horizontal overflow


def test_on_a_wide_screen_the_pointed_at_tooltip_replaces_the_focused_one(page: Any) -> None:
    from playwright.sync_api import expect

    marks = _annotate(page, LONG, ["asthma", "heart attack", "diabetes mellitus"])
    page.mouse.move(0, 0)
    marks.nth(0).focus()
    marks.nth(2).hover()
    expect(page.locator("#annotation-tip-2")).to_be_visible()
    assert _visible_tips(page) == ["annotation-tip-2"]
    page.keyboard.press("Escape")
    assert _visible_tips(page) == []


@pytest.mark.parametrize("width", [400, 1000])
def test_the_annotate_tab_buttons_are_at_least_24_px(page: Any, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    buttons = page.locator("button:visible")
    sizes = buttons.evaluate_all(
        "bs => bs.map(b => [b.textContent.trim(), b.getBoundingClientRect().width,"
        " b.getBoundingClientRect().height])"
    )
    assert {name for name, _, _ in sizes} == {"Search", "Annotate"}  # tabs, and the button
    assert len(sizes) == 3
    for name, w, h in sizes:
        assert w >= 24 and h >= 24, (name, w, h)
