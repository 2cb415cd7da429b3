"""Every answer of the service says it may not be framed or sniffed and carries a
Content-Security-Policy (serve/security_headers.py); the pages still work under it in a real
headless Chromium (Playwright), which reports no violation, and refuses to frame them. The
browser tests skip, saying why, where no Chromium or Playwright is installed."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from fastapi.testclient import TestClient

from _project_fixtures import build_index, write_codes
from _serve_fixtures import LOCAL, chromium, live_server, wait_ready
from termnorm import api
from termnorm.projects import PipelineSettings, add_reviewer, init_project, run_project
from termnorm.serve import create_app
from termnorm.serve.security_headers import PAGE_POLICY


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tiny_bert_path: Path) -> dict[str, Any]:
    """A mapped project over the tiny index: its app's options and a reviewer's token."""
    root = tmp_path_factory.mktemp("security_headers")
    index = build_index(root, tiny_bert_path)
    db = str(root / "labs.db")
    settings = PipelineSettings.of(index=index, k=3)
    init_project("labs", write_codes(root / "codes.csv"), "code", "label", "count", ["unit"],
                 settings, db=db)  # fmt: skip
    run_project("labs", api.project_matcher, db=db, show_progress=False)
    token = add_reviewer("labs", "ann", db=db).token
    return {"index": index, "project": "labs", "project_db": db, "token": token}


def _app(served: dict[str, Any]) -> Any:
    return create_app(served["index"], project=served["project"], project_db=served["project_db"])


def _secured(answer: Any, policy: str | None = PAGE_POLICY) -> None:
    where = f"{answer.request.method} {answer.request.url.path} ({answer.status_code})"
    assert answer.headers["X-Frame-Options"] == "DENY", where
    assert answer.headers["X-Content-Type-Options"] == "nosniff", where
    csp = answer.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp, where
    if policy is not None:
        assert csp == policy, where


def test_every_answer_forbids_framing_and_sniffing_and_carries_a_policy(
    served: dict[str, Any],
) -> None:
    with TestClient(_app(served), base_url=LOCAL, raise_server_exceptions=False) as client:
        wait_ready(client)
        for path, status in (
            ("/", 200),
            ("/review", 200),
            ("/static/app.js", 200),
            ("/review/review.js", 200),
            ("/v1/health", 200),
            ("/openapi.json", 200),
            ("/v1/concepts/NOPE:1", 404),
            ("/nothing", 404),
            ("/v1/review/next", 405),  # a POST route
        ):
            answer = client.get(path)
            assert answer.status_code == status, (path, answer.text)
            _secured(answer)
        _secured(client.post("/v1/review/next"))  # 401: no reviewer token
        _secured(client.post("/v1/search", content=b"{"))  # 400/422: a broken body
        refused = client.get("/", headers={"Host": "evil.example"})  # DNS rebinding: 421
        assert refused.status_code == 421
        _secured(refused)
        for docs in ("/docs", "/redoc"):  # their own policy: Swagger UI and ReDoc inline
            answer = client.get(docs)
            assert answer.status_code == 200
            _secured(answer, policy=None)
            assert answer.headers["Content-Security-Policy"] != PAGE_POLICY
        one = client.get("/")
        assert len(one.headers.get_list("Content-Security-Policy")) == 1
        assert len(one.headers.get_list("X-Frame-Options")) == 1


def _directives(policy: str) -> dict[str, str]:
    return dict(d.strip().split(" ", 1) for d in policy.split(";"))


def test_the_docs_pages_run_no_inline_script_but_their_own(served: dict[str, Any]) -> None:
    with TestClient(_app(served), base_url=LOCAL) as client:
        swagger = client.get("/docs")
        inline = re.findall(r"<script>(.*?)</script>", swagger.text, re.DOTALL)
        assert len(inline) == 1 and "SwaggerUIBundle(" in inline[0]
        digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
        scripts = _directives(swagger.headers["Content-Security-Policy"])["script-src"]
        assert scripts == f"'self' 'sha256-{digest}' blob:"
        redoc = client.get("/redoc")  # its one script is a file of the service
        assert _directives(redoc.headers["Content-Security-Policy"])["script-src"] == "'self' blob:"


def test_the_page_policy_allows_no_inline_code_and_no_other_host() -> None:
    directives = _directives(PAGE_POLICY)
    assert directives["script-src"] == directives["style-src"] == "'self'"
    assert directives["default-src"] == directives["connect-src"] == "'self'"
    assert directives["frame-ancestors"] == directives["object-src"] == "'none'"
    assert "unsafe" not in PAGE_POLICY and "*" not in PAGE_POLICY


# ---------------------------------------------------------------------- in a browser
@pytest.fixture(scope="module")
def browser(served: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    """One headless Chromium for the module, and the URL of the project's service."""
    executable = chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    with live_server(_app(served)) as url, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser, url
        browser.close()


_WATCH = """document.addEventListener("securitypolicyviolation", (e) => {
  (window.__violations = window.__violations || []).push(`${e.violatedDirective} ${e.blockedURI}`);
});"""
"""Collects the page's CSP violations in ``window.__violations`` (run before its scripts)."""


@pytest.fixture()
def tab(browser: tuple[Any, str]) -> Iterator[tuple[Any, str, list[str]]]:
    """A fresh tab that records CSP violations, the service's URL, and the console errors."""
    chromium_browser, url = browser
    context = chromium_browser.new_context()
    page = context.new_page()
    page.add_init_script(_WATCH)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield page, url, errors
    context.close()


def _no_violation(page: Any, errors: list[str], known: tuple[str, ...] = ()) -> None:
    """No CSP violation on ``page`` but the ``known`` ones ("directive URL")."""
    assert page.evaluate("window.__violations || []") == list(known)
    assert len([e for e in errors if "Content Security Policy" in e]) == len(known)


def test_the_search_page_works_under_its_policy(tab: tuple[Any, str, list[str]]) -> None:
    from playwright.sync_api import expect

    page, url, errors = tab
    page.goto(url + "/")
    expect(page.get_by_role("status").first).to_contain_text("Ready")
    page.get_by_label("Term", exact=True).fill("heart attack")  # fetch (connect-src)
    first = page.locator("#results .result").first
    expect(first).to_contain_text("T:0001")
    assert first.locator(".bar span").evaluate("s => s.style.width").endswith("%")  # CSSOM
    first.click()
    expect(page.locator("#concept-title")).to_have_text("myocardial infarction (T:0001)")
    page.get_by_role("tab", name="Annotate").click()
    page.get_by_label("Text", exact=True).fill("history of asthma")
    page.get_by_role("button", name="Annotate").click()
    expect(page.locator("#annotated mark")).to_have_text(["asthma"])
    assert page.locator("#annotated mark").evaluate("m => getComputedStyle(m).cursor") == "help"
    _no_violation(page, errors)


def test_the_review_page_works_under_its_policy(
    tab: tuple[Any, str, list[str]], served: dict[str, Any]
) -> None:
    from playwright.sync_api import expect

    page, url, errors = tab
    page.goto(f"{url}/review#token={served['token']}")
    expect(page.locator("#desk")).to_be_visible()
    expect(page.locator("#candidates li").first).to_be_visible()
    _no_violation(page, errors)


# ReDoc's menu always shows its maker's logo from a CDN: the policy blocks it, as it should
REDOC_LOGO = "img-src https://cdn.redoc.ly/redoc/logo-mini.svg"


@pytest.mark.parametrize(
    ("path", "title", "known"),
    [("/docs", ".swagger-ui .info .title", ()), ("/redoc", "h1", (REDOC_LOGO,))],
)
def test_the_docs_pages_work_under_their_policy(
    tab: tuple[Any, str, list[str]], path: str, title: str, known: tuple[str, ...]
) -> None:
    from playwright.sync_api import expect

    page, url, errors = tab
    page.goto(url + path)
    expect(page.locator(title).first).to_contain_text("termnorm", timeout=20_000)
    page.wait_for_load_state("networkidle")  # every asset and image asked for
    _no_violation(page, errors, known)


def test_another_page_cannot_frame_the_review_page(tab: tuple[Any, str, list[str]]) -> None:
    page, url, _ = tab
    child = lambda frame: frame != page.main_frame  # noqa: E731
    with page.expect_event("framenavigated", predicate=child) as navigated:
        page.set_content(f'<iframe id="f" src="{url}/review"></iframe>')  # from about:blank
    assert navigated.value.url.startswith("chrome-error://")  # refused, not the review page
    assert page.frame_locator("#f").locator("#signin-form").count() == 0
