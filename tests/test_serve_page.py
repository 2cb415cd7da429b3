"""The web page at ``/``: served with its assets, and used in a real headless Chromium
(Playwright) where one is installed — the browser tests skip, saying why, where none is."""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")


from _serve_fixtures import build_tiny_index, serving
from termnorm.serve import create_app


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_page"), tiny_bert_path)


def test_the_page_and_its_assets_are_served(index_dir: Path) -> None:
    with serving(index_dir) as client:
        page = client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        for field in ("query", "k", "add-concept", "add-text", "add-token"):
            assert f'<label for="{field}">' in page.text and f'id="{field}"' in page.text
        for asset, kind in (("app.js", "javascript"), ("style.css", "text/css")):
            answer = client.get(f"/static/{asset}")
            assert answer.status_code == 200 and kind in answer.headers["content-type"]
        assert client.get("/static/nothing.js").status_code == 404


# ---------------------------------------------------------------------- in a browser
def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium installed (Debian: apt-get install chromium); browser tests skipped")


@pytest.fixture(scope="module")
def live_url(index_dir: Path) -> Iterator[str]:
    _chromium()  # skip before starting a server for nothing
    pytest.importorskip("playwright.sync_api")
    uvicorn = pytest.importorskip("uvicorn")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    app = create_app(index_dir, token="pw-token")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while app.state.runtime.state is None and time.monotonic() < deadline:
        assert app.state.runtime.error is None, app.state.runtime.error
        time.sleep(0.05)
    yield url
    server.should_exit = True
    thread.join(10)


@pytest.fixture()
def page(live_url: str) -> Iterator[object]:
    executable = _chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        tab = browser.new_page()
        tab.goto(live_url)
        yield tab
        browser.close()


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
