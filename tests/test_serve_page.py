"""The web page at ``/``: served with its assets, and used in a real headless Chromium
(Playwright) where one is installed — the browser tests skip, saying why, where none is."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")


from _serve_fixtures import build_tiny_index, live_server, serving
from _serve_fixtures import chromium as _chromium
from termnorm.serve import create_app


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_page"), tiny_bert_path)


def test_the_page_and_its_assets_are_served(index_dir: Path) -> None:
    with serving(index_dir) as client:
        page = client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        for field in (
            "query",
            "k",
            "add-concept",
            "add-text",
            "add-token",
            "upload-file",
            "upload-column",
            "annotate-text",
        ):
            assert f'<label for="{field}">' in page.text and f'id="{field}"' in page.text
        for asset, kind in (
            ("dom.js", "javascript"),
            ("attributes.js", "javascript"),
            ("app.js", "javascript"),
            ("tabs.js", "javascript"),
            ("annotate.js", "javascript"),
            ("style.css", "text/css"),
        ):
            answer = client.get(f"/static/{asset}")
            assert answer.status_code == 200 and kind in answer.headers["content-type"]
        assert client.get("/static/nothing.js").status_code == 404


# ---------------------------------------------------------------------- in a browser
@pytest.fixture(scope="module")
def live_url(index_dir: Path) -> Iterator[str]:
    _chromium()  # skip before starting a server for nothing
    pytest.importorskip("playwright.sync_api")
    with live_server(create_app(index_dir, token="pw-token")) as url:
        yield url


@contextmanager
def _opened(url: str) -> Iterator[object]:
    """A headless Chromium tab showing ``url``."""
    executable = _chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        tab = browser.new_page()
        tab.goto(url)
        yield tab
        browser.close()


@pytest.fixture()
def page(live_url: str) -> Iterator[object]:
    with _opened(live_url) as tab:
        yield tab


def test_typing_shows_ranked_results_and_a_click_shows_the_concept(page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    expect(page.get_by_role("status").first).to_contain_text("Ready: 10 concepts")
    page.get_by_label("Term", exact=True).fill("heart attack")  # labelled input, debounced search
    results = page.locator("#results .result")
    expect(results).to_have_count(5)
    first = results.first
    expect(first).to_contain_text("T:0001")
    expect(first).to_contain_text("(ontology: tiny)")  # matched term and its source
    expect(first.locator(".bar span")).to_have_attribute("style", re.compile(r"width: \d+%"))
    first.focus()
    page.keyboard.press("Enter")  # keyboard reaches the details
    expect(page.locator("#concept-title")).to_have_text("myocardial infarction (T:0001)")
    expect(page.locator("#concept-synonyms")).to_contain_text("cardiac infarction")
    expect(page.get_by_label("Concept ID", exact=True)).to_have_value("T:0001")
    # the KG neighbours, both directions, each a button that looks the neighbour up
    neighbours = page.locator("#concept-relations .neighbour")
    expect(neighbours).to_have_text(
        ["→ isa: heart disease T:0008", "← risk_factor_of: hypertension T:0002"]
    )
    neighbours.first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#concept-title")).to_have_text("heart disease (T:0008)")
    expect(page.locator("#concept-synonyms")).to_contain_text("cardiopathy")
    expect(neighbours).to_have_text(
        ["← isa: myocardial infarction T:0001", "← risk_factor_of: diabetes mellitus T:0003"]
    )
    page.get_by_role("button", name="diabetes mellitus").click()
    expect(page.locator("#concept-title")).to_have_text("diabetes mellitus (T:0003)")
    expect(page.locator("#relations-note")).to_have_text("")


UPLOAD_ROWS = [
    ["id", "term", "note"],
    ["1", "heart attack", "first"],
    ["2", "", "an empty term"],
    ["3", "lung infection", "with, a comma"],
    ["4", "heart attack", "a repeat"],
]


def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def test_an_uploaded_csv_comes_back_mapped_for_download(page: object, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    expect(page.get_by_role("status").first).to_contain_text("Ready")
    page.get_by_label("CSV or TSV file").set_input_files(
        {"name": "terms.csv", "mimeType": "text/csv", "buffer": _csv(UPLOAD_ROWS)}
    )
    page.get_by_role("button", name="Map file").focus()
    page.keyboard.press("Enter")  # the form works from the keyboard
    expect(page.locator("#upload-result")).to_have_text(
        "Mapped 4 rows of column “term” (1 without a usable text, 0 below the minimum score)."
    )
    link = page.get_by_role("link", name="Download terms.norm.csv")
    expect(link).to_be_focused()
    with page.expect_download() as caught:
        page.keyboard.press("Enter")
    download = caught.value
    assert download.suggested_filename == "terms.norm.csv"
    saved = tmp_path / "terms.norm.csv"
    download.save_as(saved)
    got = list(csv.reader(io.StringIO(saved.read_text(encoding="utf-8"))))
    assert len(got) == len(UPLOAD_ROWS)  # one row per input row, the header included
    assert got[0][:3] == UPLOAD_ROWS[0] and "concept_id" in got[0]
    assert [row[:3] for row in got[1:]] == UPLOAD_ROWS[1:]  # input cells untouched, in order
    ids = [row[got[0].index("concept_id")] for row in got[1:]]
    assert ids[0] == ids[3] == "T:0001" and ids[2] == "T:0006" and ids[1] == ""
    assert got[2][got[0].index("error")].startswith("empty input")


def test_an_upload_without_a_text_column_says_which_columns_there_are(page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.get_by_label("CSV or TSV file").set_input_files(
        {"name": "codes.csv", "mimeType": "text/csv", "buffer": b"id,label\n1,asthma\n"}
    )
    page.get_by_role("button", name="Map file").click()
    alert = page.locator("#upload-error")
    expect(alert).to_contain_text("Not mapped: codes.csv: no column named text/term/mention")
    expect(alert).to_contain_text("['id', 'label']")
    expect(page.locator("#upload-download")).to_be_hidden()
    page.get_by_label("Text column").fill("label")
    page.get_by_role("button", name="Map file").click()
    expect(page.locator("#upload-result")).to_contain_text("Mapped 1 rows of column “label”")
    expect(alert).to_be_hidden()


def test_the_add_synonym_form_needs_the_token(page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.get_by_label("Concept ID", exact=True).fill("T:0006")
    page.get_by_label("Synonym", exact=True).fill("chest infection")
    page.get_by_label("Token", exact=True).fill("wrong")
    page.get_by_role("button", name="Add").click()
    expect(page.locator("#add-result")).to_contain_text("Not added: missing or wrong token")
    page.get_by_label("Token", exact=True).fill("pw-token")
    page.get_by_role("button", name="Add").click()
    expect(page.locator("#add-result")).to_contain_text("Added (1 added synonyms in all)")
    # the page's own search (no strategy named: the service's default) now uses it
    expect(page.get_by_role("status").first).to_contain_text("searching with d-t+od-t")
    page.get_by_label("Term", exact=True).fill("chest infection")
    first = page.locator("#results .result").first
    expect(first).to_contain_text("T:0006")
    expect(first).to_contain_text("matched “chest infection” (domain: api)")


@pytest.fixture(scope="module")
def fresh_url(index_dir: Path) -> Iterator[str]:
    """A service of its own: no synonym added by the tests above changes its answers."""
    _chromium()
    pytest.importorskip("playwright.sync_api")
    with live_server(create_app(index_dir)) as url:
        yield url


@pytest.fixture()
def fresh_page(fresh_url: str) -> Iterator[object]:
    with _opened(fresh_url) as tab:
        yield tab


ANNOTATE_TEXT = "Patient denies heart attack; history of asthma. 🫀 Sick headache."


def test_the_annotate_tab_marks_the_concepts_and_focus_shows_candidates(
    fresh_page: object,
) -> None:
    from playwright.sync_api import Page, expect

    page = fresh_page
    assert isinstance(page, Page)
    expect(page.get_by_role("status").first).to_contain_text("Ready")
    search_tab = page.get_by_role("tab", name="Search")
    search_tab.focus()
    page.keyboard.press("ArrowRight")  # the tabs pattern: arrows move and select
    annotate_tab = page.get_by_role("tab", name="Annotate")
    expect(annotate_tab).to_be_focused()
    expect(annotate_tab).to_have_attribute("aria-selected", "true")
    expect(page.get_by_label("Term", exact=True)).to_be_hidden()
    page.keyboard.press("Tab")  # from the selected tab into its panel: the text box
    text = page.get_by_label("Text", exact=True)
    expect(text).to_be_focused()
    page.keyboard.type(ANNOTATE_TEXT)
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Annotate")).to_be_focused()
    page.keyboard.press("Enter")
    marks = page.locator("#annotated mark")
    expect(marks).to_have_text(["heart attack", "asthma", "Sick headache"])
    expect(page.locator("#annotate-result")).to_have_text(
        "3 concepts found; Tab moves between them."
    )
    assert page.locator("#annotated").inner_text().replace("historical", "") == ANNOTATE_TEXT
    expect(marks.nth(0)).to_have_attribute("data-concept", "T:0001")
    expect(marks.nth(0)).to_have_class("concept negated")  # struck through
    expect(page.locator("#annotated .badge")).to_have_text(["historical"])
    expect(marks.nth(2)).to_have_attribute("data-concept", "T:0005")  # after an emoji
    tips = page.locator('#annotated [role="tooltip"]')
    expect(tips).to_have_count(3)
    for i in range(3):
        expect(tips.nth(i)).to_be_hidden()
    page.keyboard.press("Tab")  # from the button to the first mark
    expect(marks.nth(0)).to_be_focused()
    first_tip = page.locator("#" + str(marks.nth(0).get_attribute("aria-describedby")))
    expect(first_tip).to_be_visible()
    expect(first_tip).to_contain_text("myocardial infarction T:0001")
    expect(first_tip).to_contain_text("negated")
    expect(first_tip.locator("li")).to_have_count(5)  # the ranked candidates, k = 5
    expect(marks.nth(0)).to_have_accessible_description(re.compile("myocardial infarction"))
    page.keyboard.press("Escape")
    expect(first_tip).to_be_hidden()
    page.keyboard.press("Tab")
    expect(marks.nth(1)).to_be_focused()
    expect(first_tip).to_be_hidden()
    expect(page.locator("#annotation-tip-1")).to_contain_text("asthma T:0004")
    marks.nth(2).hover()
    expect(page.locator("#annotation-tip-2")).to_contain_text("migraine T:0005")


def test_the_annotate_tab_shows_errors(fresh_page: object) -> None:
    from playwright.sync_api import Page, expect

    page = fresh_page
    assert isinstance(page, Page)
    page.get_by_role("tab", name="Annotate").click()
    page.get_by_label("Text", exact=True).fill("asthma\u0001")
    page.get_by_role("button", name="Annotate").click()
    error = page.locator("#annotate-error")
    expect(error).to_contain_text("Not annotated: document 'text': binary data, not text")
    expect(page.locator("#annotated")).to_be_hidden()
    page.get_by_label("Text", exact=True).fill("no concept here")
    page.get_by_role("button", name="Annotate").click()
    expect(page.locator("#annotate-result")).to_have_text("No concept found.")
    expect(error).to_be_hidden()


@pytest.mark.parametrize("width", [320, 400])
def test_the_page_fits_a_narrow_screen(page: object, width: int) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.set_viewport_size({"width": width, "height": 800})
    page.get_by_label("Term", exact=True).fill("heart attack")
    expect(page.locator("#results .result")).to_have_count(5)
    page.locator("#results .result").first.click()
    expect(page.locator("#concept-title")).to_have_text("myocardial infarction (T:0001)")
    page.get_by_label("CSV or TSV file").set_input_files(
        {"name": "a-rather-long-file-name-of-terms.csv", "mimeType": "text/csv", "buffer": b"x"}
    )
    scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll <= inner == width  # no horizontal overflow
    for field in ("#query", "#upload-file", "#upload-column", "#add-token", "#upload-button"):
        box = page.locator(field).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, field


def test_the_page_says_when_the_server_is_unreachable(page: object) -> None:
    from playwright.sync_api import Page, Route, expect

    assert isinstance(page, Page)
    status = page.get_by_role("status").first
    expect(status).to_contain_text("Ready")
    page.get_by_label("Term", exact=True).fill("heart attack")
    results = page.locator("#results .result")
    expect(results).to_have_count(5)

    def down(route: Route) -> None:
        route.abort("connectionrefused")

    page.route("**/v1/**", down)  # the server stops answering
    page.get_by_label("Term", exact=True).fill("lung infection")
    error = page.locator("#search-error")
    expect(error).to_contain_text("Search failed: cannot reach the termnorm server")
    expect(results).to_have_count(0)  # the stale results of "heart attack" are gone
    expect(status).to_have_text("Unreachable: the server does not answer. Retrying…")
    expect(status).to_have_attribute("data-state", "unreachable")
    assert "Failed to fetch" not in page.locator("main").inner_text()

    page.unroute("**/v1/**", down)  # back: the status recovers by itself (polling)
    expect(status).to_contain_text("Ready: 10 concepts", timeout=10_000)
    expect(status).to_have_attribute("data-state", "ready")
    page.get_by_label("Term", exact=True).fill("asthma")
    expect(results.first).to_contain_text("T:0004")
    expect(error).to_be_hidden()


# ---------------------------------------------------------------------- API documentation
def _refs(html: str) -> list[str]:
    """Every URL a documentation page loads (src, href, the spec's url)."""
    return re.findall(r'(?:src|href|spec-url)="([^"]+)"|url: \'([^\']+)\'', html)


def test_the_docs_pages_load_only_local_assets(index_dir: Path) -> None:
    with serving(index_dir) as client:
        for path, assets in (
            ("/docs", {"swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"}),
            ("/redoc", {"redoc.standalone.js", "favicon.png"}),
        ):
            html = client.get(path)
            assert html.status_code == 200 and "://" not in html.text, path  # no CDN, no fonts
            policy = html.headers["Content-Security-Policy"]  # nor anything the scripts add
            assert "default-src 'self'" in policy and "img-src 'self' data:" in policy
            refs = [a or b for a, b in _refs(html.text)]
            assert "/openapi.json" in refs
            assert {r.rsplit("/", 1)[-1] for r in refs if r.startswith("/docs-assets/")} == assets
            for ref in refs:
                assert ref.startswith("/") and not ref.startswith("//"), ref
                answer = client.get(ref)
                assert answer.status_code == 200 and len(answer.content) > 100, ref


@pytest.mark.parametrize(
    ("path", "title"), [("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")]
)
def test_the_docs_pages_render_offline(live_url: str, path: str, title: str) -> None:
    executable = _chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    outside: list[str] = []

    def offline(route: object) -> None:
        assert isinstance(route, sync_api.Route)
        if route.request.url.startswith(live_url):
            route.continue_()
        else:  # the internet is not there
            outside.append(route.request.url)
            route.abort("internetdisconnected")

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        tab = browser.new_page()
        tab.route("**/*", offline)
        tab.goto(live_url + path)
        sync_api.expect(tab.locator(title).first).to_contain_text("termnorm", timeout=20_000)
        browser.close()
    assert outside == []
