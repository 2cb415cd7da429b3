"""``termnorm eval annotate``: the gold's documents annotated, scored at four levels.

The annotator is replaced by one that returns known annotations, so every number is known;
what is tested is the command: reading the gold, feeding every document, counting refused
documents, and printing the evaluator's levels.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import typer
from typer.testing import CliRunner

from _cli import command_app
from termnorm.annotate import detectors
from termnorm.cli import eval_annotate_cmd, eval_cmd

# GSC+ layout: PMID line, text line, then start<TAB>end<TAB>mention<TAB>HP:id; blank line
TEXT_1 = "Seizures and ataxia were seen."
TEXT_2 = "No fever."
GOLD = (
    f"1\n{TEXT_1}\n0\t8\tSeizures\tHP:0001250\n13\t19\tataxia\tHP:0001251\n\n"
    f"2\n{TEXT_2}\n3\t8\tfever\tHP:0001945\n"
)


class Found(NamedTuple):
    doc_id: str
    start: int
    end: int
    concept_id: str


class Result(NamedTuple):
    doc_id: str
    annotations: list[Any]
    error: str | None = None


class FakeMemo:
    """The alternative IDs of the fake annotator's index."""

    def __init__(self, alt: dict[str, list[str]]) -> None:
        self.alt = alt

    def alt_ids(self, concept_id: str) -> list[str]:
        return self.alt.get(concept_id, [])


class FakeAnnotator:
    """Finds "Seizures" right, "ataxia" with a wrong concept, and refuses document 2; its
    index gives ``alt`` as the concepts' alternative IDs."""

    def __init__(self, alt: dict[str, list[str]] | None = None) -> None:
        self.seen: list[str] = []
        self.memo = FakeMemo(alt or {})

    def annotate_many(self, docs: Iterable[tuple[str, object]]) -> Iterator[Result]:
        for doc_id, text in docs:
            self.seen.append(doc_id)
            if doc_id == "2":
                yield Result(doc_id, [], "document 2 is too long")
                continue
            assert text == TEXT_1
            yield Result(doc_id, [Found("1", 0, 8, "HP:0001250"), Found("1", 13, 19, "HP:9")])


@pytest.fixture()
def gold(tmp_path: Path) -> Path:
    path = tmp_path / "gold.tsv"
    path.write_text(GOLD)
    return path


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeAnnotator:
    annotator = FakeAnnotator()
    monkeypatch.setattr(detectors, "build_annotator", lambda spec: annotator)
    return annotator


def invoke(*args: str | Path) -> Any:
    app: typer.Typer = command_app(eval_cmd.register)
    return CliRunner().invoke(app, ["eval", "annotate", *map(str, args)], env={"COLUMNS": "200"})


def test_json_reports_every_level(gold: Path, fake: FakeAnnotator, tmp_path: Path) -> None:
    result = invoke(gold, "--index", tmp_path, "--format", "gscplus", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert fake.seen == ["1", "2"]
    assert (out["mention_strict_tp"], out["mention_strict_fp"], out["mention_strict_fn"]) == (
        1.0,
        1.0,
        2.0,
    )
    assert out["mention_strict_f1"] == pytest.approx(0.4)  # P 1/2, R 1/3
    assert out["span_tp"] == 2.0 and out["span_fn"] == 1.0
    assert out["document_precision"] == 0.5 and out["document_recall"] == pytest.approx(1 / 3)
    assert (out["n_missed_span"], out["n_wrong_concept"]) == (1, 1)
    assert (out["n_documents"], out["n_failed_documents"]) == (2, 1)
    assert "document 2 not annotated: document 2 is too long" in result.stderr


def test_a_gold_id_that_is_an_alternative_id_of_the_found_concept_is_a_hit(
    gold: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """ "ataxia" found as HP:9, whose alternative ID in the index is the gold's HP:0001251."""
    annotator = FakeAnnotator({"HP:9": ["HP:0001251"]})
    monkeypatch.setattr(detectors, "build_annotator", lambda spec: annotator)
    out = json.loads(invoke(gold, "--index", tmp_path, "--format", "gscplus", "--json").stdout)
    assert (out["mention_strict_tp"], out["mention_strict_fp"]) == (2.0, 0.0)
    assert (out["document_tp"], out["document_fp"], out["document_fn"]) == (2.0, 0.0, 1.0)
    assert out["n_wrong_concept"] == 0


def test_table_names_the_levels_and_the_error_split(
    gold: Path, fake: FakeAnnotator, tmp_path: Path
) -> None:
    result = invoke(gold, "--index", tmp_path)
    assert result.exit_code == 0, result.output
    for label in eval_annotate_cmd.LEVEL_LABELS.values():
        assert label in result.stdout
    assert "not found: 1" in result.stdout and "wrong concept: 1" in result.stdout
    assert "(1 refused)" in result.stdout


def test_corpus_without_offsets_is_refused(fake: FakeAnnotator, tmp_path: Path) -> None:
    path = tmp_path / "mentions.tsv"
    path.write_text("0001\tHeart-attack\n")
    result = invoke(path, "--index", tmp_path, "--format", "tsv")
    assert result.exit_code != 0
    assert "no document text" in str(result.exception)


def test_without_index_it_scores_annotate_defaults(
    gold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --index: the default index that ``termnorm annotate`` uses (announced when it is
    built), and HPO's phenotypes as findings unless --findings says otherwise."""
    from termnorm.annotate.modifiers import Findings
    from termnorm.cli import normalize_cmd

    specs: list[Any] = []
    announced: list[bool] = []
    monkeypatch.setattr(
        detectors, "build_annotator", lambda spec: specs.append(spec) or FakeAnnotator()
    )
    monkeypatch.setattr(normalize_cmd, "_announce_default_index", lambda: announced.append(True))
    result = invoke(gold, "--format", "gscplus", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["index"], out["findings"]) == (None, "phenotypes")
    assert specs[0].search.index is None and specs[0].findings is Findings.PHENOTYPES
    assert announced == [True]
    result = invoke(gold, "--format", "gscplus", "--findings", "all", "--json")
    assert json.loads(result.stdout)["findings"] == "all" and specs[1].findings is Findings.ALL
