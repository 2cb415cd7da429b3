"""``termnorm serve``: cheap registration, a refused non-index, and a real server on
loopback that is killed and restarted with its added synonyms kept."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")

from typer.testing import CliRunner

from conftest import make_tiny_kg
from termnorm import api
from termnorm.cli.main import _register, app

SRC = Path(__file__).resolve().parents[1] / "src"


def test_registering_serve_imports_nothing_heavy() -> None:
    code = (
        "import sys; from termnorm.cli.main import _register; _register(); "
        "print(sorted(m for m in ('fastapi', 'uvicorn', 'torch', 'pandas', 'termnorm.serve.app')"
        " if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"


def test_serve_refuses_a_folder_that_is_not_an_index(tmp_path: Path) -> None:
    _register()
    result = CliRunner().invoke(app, ["serve", "--index", str(tmp_path)])
    assert result.exit_code == 2
    assert "termnorm index build" in result.output


def test_serve_passes_the_upload_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    (tmp_path / "index.json").write_text("{}")  # only checked for presence before start-up
    started: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: started.append(application))
    _register()
    result = CliRunner().invoke(app, ["serve", "--index", str(tmp_path), "--max-upload-mb", "0.5"])
    assert result.exit_code == 0, result.output
    assert started[0].state.settings.max_upload_bytes == 1 << 19


def test_serve_passes_the_guards_and_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    from termnorm.cli.serve_cmd import SHUTDOWN_GRACE_S

    (tmp_path / "index.json").write_text("{}")
    for name in ("a.tsv", "b.tsv"):
        (tmp_path / name).write_text("T:0001\tanemia\n")
    started: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: started.append((application, kw)))
    _register()
    argv = ["serve", "--index", str(tmp_path), "--max-upload-rows", "7"]
    argv += ["--max-upload-columns", "9", "--allow-host", "mapper.lan"]
    argv += ["--allow-origin", "https://review.example.org"]
    argv += ["--synonyms", str(tmp_path / "a.tsv"), "--synonyms", str(tmp_path / "b.tsv")]
    argv += ["--header-timeout-s", "3", "--body-timeout-s", "20", "--max-connections", "40"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    application, kw = started[0]
    settings = application.state.settings
    assert (settings.max_upload_rows, settings.max_upload_columns) == (7, 9)
    assert settings.allow_hosts == ("mapper.lan",)
    assert settings.allow_origins == ("https://review.example.org",)
    assert [p.name for p in settings.spec.synonyms] == ["a.tsv", "b.tsv"]
    assert kw["timeout_graceful_shutdown"] == SHUTDOWN_GRACE_S  # SIGTERM does not wait forever
    assert (kw["http"].header_timeout_s, kw["http"].body_timeout_s) == (3.0, 20.0)  # slow clients
    assert kw["limit_concurrency"] == 40


def test_serve_refuses_a_malformed_origin(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text("{}")
    _register()
    result = CliRunner().invoke(
        app, ["serve", "--index", str(tmp_path), "--allow-origin", "not an origin"]
    )
    assert result.exit_code != 0
    assert "allow-origin" in result.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _call(url: str, body: dict[str, Any] | None = None, token: str | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def _start(
    index: Path, store: Path, port: int, token: str | None, log: Path
) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-c", "from termnorm.cli.main import main; main()"]
    argv += ["serve", "--index", str(index)]
    argv += ["--synonyms-file", str(store), "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("TERMNORM_TOKEN", None)
    if token is not None:
        env["TERMNORM_TOKEN"] = token
    with log.open("ab") as sink:
        return subprocess.Popen(argv, env=env, stdout=sink, stderr=sink)


def _wait_ready(base: str, process: subprocess.Popen[bytes], log: Path) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text(errors="replace")
        try:
            return dict(_call(f"{base}/v1/ready"))
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    raise AssertionError("the server did not become ready")


def test_a_killed_server_restarts_with_its_synonyms(tiny_bert_path: Path, tmp_path: Path) -> None:
    kg = make_tiny_kg().save(tmp_path / "kg", card={"sources": [{"format": "fixture"}]})
    index = tmp_path / "idx"
    api.build_index(kg, model=tiny_bert_path, out=index, show_progress=False)
    store = tmp_path / "synonyms.jsonl"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = _start(index, store, port, "t0k", tmp_path / "first.log")
    try:
        assert _wait_ready(base, server, tmp_path / "first.log")["domain_synonyms"] == 0
        pairs = {"pairs": [{"concept_id": "T:0007", "text": "iron-poor blood"}]}
        assert _call(f"{base}/v1/synonyms", pairs, token="t0k")["kept"] == 1
    finally:
        server.send_signal(signal.SIGKILL)  # no clean shutdown
        server.wait(30)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = _start(index, store, port, None, tmp_path / "second.log")
    try:
        assert _wait_ready(base, server, tmp_path / "second.log")["domain_synonyms"] == 1
        body = {"texts": ["iron-poor blood"], "k": 1, "strategy": "d-t"}
        top = _call(f"{base}/v1/normalize", body)["results"][0]["candidates"][0]
        assert top["concept_id"] == "T:0007" and top["source"] == "domain"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


def _non_default(field: Any, kind: Any, tmp_path: Path) -> tuple[list[str], Any]:
    """Command-line words giving setting ``field`` a value other than its default, and the
    value the settings then hold."""
    from termnorm.cli._config_options import option_names

    names = option_names(field, kind).split("/")
    if kind is bool:
        return [names[1] if field.default else names[0]], not field.default
    if kind is int or kind is float:
        return [names[0], str(field.default + 1)], field.default + 1
    text = {
        "synonym_store": str(tmp_path / "store.jsonl"),
        "allow_origins": "https://review.example.org",
    }.get(field.name, "mapper.lan")
    value: Any = Path(text) if "Path" in str(kind) else text
    return [names[0], text], (value,) if "tuple" in str(kind) else value


def _started(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> tuple[Any, dict[str, Any]]:
    """The settings of the app ``termnorm ARGV`` would serve, and uvicorn's keywords (the
    server is not started)."""
    import uvicorn

    runs: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: runs.append((application, kw)))
    _register()
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    return runs[0][0].state.settings, runs[0][1]


def test_every_setting_is_an_option_that_reaches_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ServeSettings field (its options generated from the dataclass) set on the command
    line arrives in the app's settings; a field added later is covered with no edit here."""
    import dataclasses
    from typing import get_type_hints

    from termnorm.serve.settings import ServeSettings

    (tmp_path / "index.json").write_text("{}")
    monkeypatch.delenv("TERMNORM_TOKEN", raising=False)
    hints = get_type_hints(ServeSettings)
    skipped = {"spec", "max_upload_bytes", "project", "project_db"}  # tested on their own
    skipped.add("annotate")  # an AnnotateSpec: its own options, checked below
    argv, expected = ["serve", "--index", str(tmp_path)], {}
    for field in dataclasses.fields(ServeSettings):
        if field.name not in skipped:
            words, expected[field.name] = _non_default(field, hints[field.name], tmp_path)
            argv += words
    argv += ["--window-chars", "300", "--language", "fr", "--findings", "all"]
    settings, kw = _started(monkeypatch, argv)
    assert {name: getattr(settings, name) for name in expected} == expected
    annotate = settings.annotate
    assert (annotate.window_chars, annotate.language, annotate.findings) == (300, "fr", "all")
    assert kw["host"] == settings.host == "mapper.lan"


def test_the_token_and_the_project_database_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "index.json").write_text("{}")
    monkeypatch.setenv("TERMNORM_TOKEN", "s3cret")
    settings, _ = _started(monkeypatch, ["serve", "--index", str(tmp_path)])
    assert settings.token == "s3cret"
    monkeypatch.setenv("TERMNORM_PROJECT_DB", str(tmp_path / "p.db"))
    result = CliRunner().invoke(app, ["serve", "--index", str(tmp_path)])
    assert result.exit_code == 2 and "--db needs --project PROJECT" in result.output


def test_settings_out_of_bounds_are_refused_by_the_cli_and_the_python_api(
    tmp_path: Path,
) -> None:
    from termnorm.serve.settings import ServeSettings

    (tmp_path / "index.json").write_text("{}")
    _register()
    result = CliRunner().invoke(app, ["serve", "--index", str(tmp_path), "--lease-minutes", "0"])
    assert result.exit_code == 2 and "--lease-minutes" in result.output
    with pytest.raises(ValueError, match=r"lease_minutes must be at least 0.1 \(got 0.05\)"):
        ServeSettings(lease_minutes=0.05)
    with pytest.raises(ValueError, match=r"max_k must be at least 1 \(got 0\)"):
        ServeSettings(max_k=0)
