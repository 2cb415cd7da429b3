"""The service embeds the pipeline spec (issue 42): ``serve`` takes the spec's options as
``normalize`` does, a request replaces only the declared overridable fields, the hybrid
recall and combiner cards serve (encoded through the micro-batcher), and ``/v1/ready``
reports the spec without the server's absolute paths."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")

from typer.testing import CliRunner

from _serve_fixtures import build_tiny_index, serving
from termnorm import api
from termnorm.cli.main import _register, app
from termnorm.search.spec import PipelineSpec
from termnorm.serve.settings import OVERRIDABLE, ServeSettings
from termnorm.serve.state import ServiceState
from test_learned_stages_cli import cards, fresh_api  # noqa: F401  # fixtures

TEXTS = ["heart attack", "asthma"]


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_spec"), tiny_bert_path)


def _options(help_text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]+", help_text))


def test_serve_offers_the_specs_options() -> None:
    _register()
    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    offered = _options(result.output)
    for flag in (
        "--runtime",
        "--threads",
        "--hybrid",
        "--combiner",
        "--ranker",
        "--k-c",
        "--strategy",
        "--min-score",
        "--namespace",
        "--type",
        "--rank-mode",
        "--multi",
        "--implication",
        "--synonyms",
        "--index",
        "--model",
    ):
        assert flag in offered, flag
    normalize = CliRunner().invoke(app, ["normalize", "--help"], env={"COLUMNS": "200"})
    spec_flags = _options(normalize.output) - {"--input", "--output", "--json", "--help"}
    assert spec_flags & offered >= {"--hybrid", "--combiner", "--runtime", "--sieve-threshold"}


def test_serve_passes_its_spec_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    (tmp_path / "index.json").write_text("{}")
    card = tmp_path / "hybrid.json"
    card.write_text("{}")  # only checked for presence before start-up
    started: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: started.append(application))
    _register()
    argv = ["serve", "--index", str(tmp_path), "--hybrid", str(card), "--strategy", "o-c"]
    argv += ["--min-score", "0.25", "--namespace", "T", "--runtime", "torch"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    spec = started[0].state.settings.spec
    assert spec == PipelineSpec(
        index=tmp_path, hybrid=card, strategy="o-c", min_score=0.25, namespaces=("T",)
    )
    refused = CliRunner().invoke(app, ["serve", "--index", str(tmp_path), "--multi"])
    assert refused.exit_code == 2 and "--multi and --implication need --ranker" in refused.output


def test_a_request_replaces_only_the_overridable_fields() -> None:
    assert all(name in PipelineSpec.__dataclass_fields__ for name in OVERRIDABLE)
    assert not {"index", "model", "runtime", "hybrid", "combiner", "ranker"} & set(OVERRIDABLE)
    base = PipelineSpec(index=Path("idx"), strategy="o-c", min_score=0.5, namespaces=("T",))
    state = ServiceState(ServeSettings(spec=base), space=None)  # type: ignore[arg-type]
    assert state.request_spec({}) == base
    assert state.request_spec({"strategy": " ", "min_score": None}) == base  # the service's
    assert state.request_spec({"strategy": "O-T", "namespaces": []}) == base.replace(
        strategy="o-t", namespaces=()
    )
    with pytest.raises(ValueError, match=r"a request cannot set \['index'\]"):
        state.request_spec({"index": "/etc"})


def test_the_services_spec_is_every_requests_default(index_dir: Path) -> None:
    with serving(index_dir, strategy="o-c", namespaces=["T"]) as client:
        ready = client.get("/v1/ready").json()
        plain = client.post("/v1/normalize", json={"texts": TEXTS, "k": 2}).json()
        named = client.post("/v1/normalize", json={"texts": TEXTS, "strategy": "o-t"}).json()
        forged = client.post("/v1/normalize", json={"texts": TEXTS, "index": "/etc"})
    assert ready["strategy"] == "o-c" and ready["spec"]["strategy"] == "o-c"
    assert ready["spec"]["namespaces"] == ["T"] and ready["spec"]["index"] == index_dir.name
    assert plain["strategy"] == "o-c" and named["strategy"] == "o-t"
    want = api.normalize(TEXTS, index=index_dir, strategy="o-c", k=2)
    got = [[c["concept_id"] for c in r["candidates"]] for r in plain["results"]]
    assert got == [[c.concept_id for c in row] for row in want]
    assert forged.status_code == 422 and forged.json()["detail"][0]["loc"] == ["body", "index"]


def _metric(text: str, name: str) -> float:
    return next(float(line.split()[1]) for line in text.splitlines() if line.startswith(name + " "))


def test_the_service_serves_hybrid_and_combiner_cards(
    cards: tuple[Path, Path, Path, Path],  # noqa: F811
) -> None:
    index, mentions, hybrid, combiner = cards
    options = {"synonym_files": [mentions], "hybrid": hybrid, "combiner": combiner}
    with serving(index, **options) as client:
        ready = client.get("/v1/ready")
        answer = client.post("/v1/normalize", json={"texts": TEXTS, "k": 3})
        floor = client.post("/v1/normalize", json={"texts": TEXTS, "min_score": 1.0})
        metrics = client.get("/metrics").text
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["strategy"].startswith("hybrid(d-t+od-t") and body["strategy"].endswith("+combiner")
    want = api.normalize(
        TEXTS, index=index, synonyms=mentions, k=3, hybrid=hybrid, combiner=combiner
    )
    for result, row in zip(body["results"], want, strict=True):
        assert [c["concept_id"] for c in result["candidates"]] == [c.concept_id for c in row]
        for got, expected in zip(result["candidates"], row, strict=True):
            assert got["score"] == pytest.approx(expected.score, abs=1e-5)
            assert 0.0 <= got["score"] <= 1.0  # the combiner's probability
    assert all(r["abstained"] for r in floor.json()["results"])  # a probability floor
    # the built matcher encoded through the micro-batcher: every query text was batched
    assert _metric(metrics, "termnorm_batch_texts_sum") == 2 * len(TEXTS)
    spec = ready.json()["spec"]
    assert (spec["hybrid"], spec["combiner"], spec["index"]) == (
        "hybrid.json",
        "combiner.json",
        index.name,
    )
    assert spec["synonyms"] == [mentions.name]
    assert str(index.parent) not in ready.text  # the server's paths stay hidden
