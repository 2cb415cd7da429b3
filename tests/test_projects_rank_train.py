"""``termnorm rank train --project``: a mapping project's review decisions as the ranker's
training data (SQLite and PostgreSQL), through the Python entry point and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import run_main
from _project_fixtures import build_index, postgres_url, project_db, write_codes  # noqa: F401
from termnorm import api
from termnorm.projects import PipelineSettings, decide, init_project, run_project, training_data
from termnorm.projects.training_data import project_training_data, train_project_ranker
from termnorm.search.rank import RankerTrainConfig, RankTrainSpec, load_ranker
from termnorm.search.stages.ranker.ranker import CARD_NAME


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, tiny_bert_path: Path) -> Path:
    return build_index(tmp_path_factory.mktemp("project_rank_index"), tiny_bert_path)


@pytest.fixture()
def reviewed(tmp_path: Path, index: Path, project_db: str) -> tuple[str, str]:  # noqa: F811
    """The code list mapped and reviewed: approvals, a pick, a broad pick, a no-match, an
    auto-approval-free flag; ``(name, db)``."""
    db = project_db
    source = write_codes(tmp_path / "codes.csv")
    settings = PipelineSettings.of(index=index, k=3)
    init_project("labs", source, "code", "label", "count", ["unit"], settings, db=db)
    run_project("labs", api.project_matcher, db=db, show_progress=False)
    for code in ("L001", "L002", "L004"):
        decide("labs", code, "approve", reviewer="ann", db=db)
    decide("labs", "L003", "pick", reviewer="ann", concept_id="T:0003", db=db)
    decide("labs", "L006", "pick", reviewer="bob", concept_id="T:0006", predicate="broad", db=db)
    decide("labs", "L005", "no_match", reviewer="bob", db=db)
    decide("labs", "L007", "flag", reviewer="bob", db=db)
    return "labs", db


def test_decisions_become_queries_and_cross_fitted_synonyms(reviewed: tuple[str, str]) -> None:
    name, db = reviewed
    data, settings = project_training_data(name, db)
    queries = {q.doc_id: (q.text, q.gold_ids) for q in data.queries}
    assert set(queries) == {"L001", "L002", "L003", "L004", "L006"}  # no no-match, no flag
    assert queries["L003"] == ("sugar diabetes", ("T:0003",))
    crossfit = {doc: pair for doc, pair in data.crossfit}
    assert set(crossfit) == {"L001", "L002", "L003", "L004"}  # exact mappings only
    assert data.fixed == [] and settings.k == 3
    assert data.cards == [{"project": "labs", "format": "project", "mentions": 5}]


def test_rank_train_project_trains_on_the_decisions(
    reviewed: tuple[str, str], index: Path, tiny_bert_path: Path, tmp_path: Path
) -> None:
    name, db = reviewed
    spec = RankTrainSpec(
        index=index,
        plain=True,
        base_model=tiny_bert_path,
        k_c=3,
        folds=2,
        max_length=32,
        holdout=0.0,
        train=RankerTrainConfig(epochs=1, batch_size=6),
    )
    folder = train_project_ranker(name, spec, tmp_path / "ranker", db)
    card = json.loads((folder / CARD_NAME).read_text())
    assert card["training_data"][0]["project"] == "labs"
    assert card["strategy"] == "d-t+od-t"  # the project's learned synonyms are searched
    assert card["metrics"]["queries"] == 5 and card["metrics"]["pairs"] == 15
    ranker = load_ranker(folder)
    assert ranker.score("heart attack", api.normalize("heart attack", index=index, k=3)).shape == (
        3,
    )
    with pytest.raises(ValueError, match="not both"):
        train_project_ranker(
            name, RankTrainSpec(index=index, mentions=(folder,)), tmp_path / "x", db
        )


def test_rank_train_project_cli(
    reviewed: tuple[str, str],
    index: Path,
    tiny_bert_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name, db = reviewed
    base = [
        "rank",
        "train",
        "--index",
        str(index),
        "--plain",
        "--model",
        str(tiny_bert_path),
        "--k-c",
        "3",
        "--folds",
        "2",
        "--holdout",
        "0",
        "--epochs",
        "1",
        "--json",
    ]
    code, out, err = run_main(
        [*base, "--project", name, "--db", db, "--out", str(tmp_path / "r")], capsys
    )
    assert code == 0, err
    assert json.loads(out)["training_data"][0]["mentions"] == 5
    code, _, err = run_main([*base, "--out", str(tmp_path / "none")], capsys)
    assert code != 0 and "--project NAME" in err
    other = build_index(tmp_path / "other", tiny_bert_path)
    code, _, err = run_main(
        [
            *base[:2],
            "--index",
            str(other),
            *base[4:],
            "--project",
            name,
            "--db",
            db,
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 1 and "maps with the index" in err


def test_the_ranker_recalls_as_the_project_searches_unless_told_otherwise(
    tmp_path: Path, index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --strategy the training recall is the project's spec: its strategy and sieve
    threshold; --strategy replaces both (the rank spec's own threshold)."""
    db = tmp_path / "p.db"
    settings = PipelineSettings.of(index=index, strategy="d-t+od-t", sieve_threshold=0.8, k=3)
    init_project("p", write_codes(tmp_path / "c.csv"), "code", "label", settings=settings, db=db)
    decide("p", "L003", "pick", reviewer="ann", concept_id="T:0003", db=db)
    given: list[RankTrainSpec] = []
    monkeypatch.setattr(
        training_data, "train_ranker", lambda spec, *_a, **_k: given.append(spec) or tmp_path
    )
    train_project_ranker("p", RankTrainSpec(index=index), tmp_path / "r", db)
    train_project_ranker("p", RankTrainSpec(index=index, strategy="o-t"), tmp_path / "r", db)
    assert [(s.strategy, s.sieve_threshold) for s in given] == [("d-t+od-t", 0.8), ("o-t", 0.95)]
