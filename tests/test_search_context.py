"""A mention in its document: the expansion rules on hand-made scores, the context matcher,
eval normalize with and without abbreviations, the context column in files, the API's
``context=`` and clean output (no Ab3P diagnostics)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from _cli import command_app
from termnorm import api
from termnorm.cli import eval_cmd, normalize_cmd
from termnorm.errors import InputFormatError
from termnorm.mentions.abbreviations import Expansion
from termnorm.search import job as search_job
from termnorm.search.batch import normalize_file
from termnorm.search.candidate import Candidate, RowResult
from termnorm.search.context import (
    ContextMatcher,
    ExpansionChoice,
    ExpansionRule,
    expand_in_documents,
    parse_expansion_rule,
)
from termnorm.search.file_spec import NormalizeFileSpec
from termnorm.search.query import QueryError, query_problem

pytest.importorskip("pyab3p")

# One document that defines SD; the double space makes Ab3P print "Failed to find sentence".
TITLE = "Sugar diabetes (SD) in  adults."
ABSTRACT = "SD was frequent; HTN was not."
DOCUMENT = f"{TITLE}\n{ABSTRACT}"


def cand(concept_id: str, score: float, rank: int = 1) -> Candidate:
    return Candidate(concept_id, concept_id.lower(), score, concept_id.lower(), rank)


# ---------------------------------------------------------------- the rules, hand-made scores
@pytest.mark.parametrize(
    ("rule", "threshold", "top_original", "top_expanded", "expanded_kept"),
    [
        ("best", 0.0, 0.70, 0.90, True),
        ("best", 0.0, 0.90, 0.70, False),
        ("best", 0.0, 0.8000001, 0.8000004, True),  # equal at 6 decimals: the document's
        ("best", 0.0, 1.0, 1.0, True),  # both exact: the document's definition wins
        ("expanded", 0.0, 1.00, 0.50, True),
        ("original-first", 0.95, 0.96, 0.99, False),  # a near-exact original hit wins
        ("original-first", 0.95, 0.94, 0.60, True),  # below the threshold: expanded
        ("original-first", 0.95, 0.95, 0.99, False),  # at the threshold: original
        ("original-first", 0.95, 1.0, 1.0, True),  # a tie: the document's definition
    ],
)
def test_the_rule_on_hand_made_scores(
    rule: str, threshold: float, top_original: float, top_expanded: float, expanded_kept: bool
) -> None:
    choice = ExpansionChoice(ExpansionRule(rule), threshold)
    original = [cand("A:1", top_original), cand("A:2", 0.1, 2)]
    expanded = [cand("B:1", top_expanded)]
    assert choice.prefers_expanded(original, expanded) is expanded_kept
    kept = choice.keep(original, expanded, "SD")
    if expanded_kept:
        assert kept == [cand("B:1", top_expanded)._replace(expanded_from="SD")]
    else:
        assert kept is None


@pytest.mark.parametrize("rule", list(ExpansionRule))
def test_an_empty_ranking_loses_and_two_empty_keep_the_original(rule: ExpansionRule) -> None:
    choice = ExpansionChoice(rule)
    assert choice.prefers_expanded([], [cand("B:1", 0.1)])
    assert not choice.prefers_expanded([cand("A:1", 0.1)], [])
    assert not choice.prefers_expanded([], [])


def test_default_rule_is_best_and_unknown_rules_are_listed() -> None:
    assert ExpansionChoice().rule is ExpansionRule.BEST
    assert ExpansionChoice("expanded").rule is ExpansionRule.EXPANDED  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="known rules: expanded, best, original-first"):
        parse_expansion_rule("longest")


# ---------------------------------------------------------------- a deterministic row matcher
EXACT_TERMS = {
    "sugar diabetes": "T:0003",
    "dm": "T:0003",
    "htn": "T:0002",
    "mi": "T:0001",
    "cd": "T:0010",  # the dictionary's "CD" (Celiac Disease)
    "crohn disease": "T:0011",
}


class ExactMatcher:
    """Score 1.0 for a text that is a tiny-KG term (case-insensitive), else T:0007 at 0.3;
    records each call's texts."""

    name = "exact-fake"

    def __init__(self) -> None:
        self.calls: list[list[object]] = []

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        return ()

    def configure(self, **options: Any) -> ExactMatcher:
        return self

    def identity(self) -> dict[str, Any]:
        return {"class": "ExactMatcher"}

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        self.calls.append(list(texts))
        out = []
        for text in texts:
            problem = query_problem(text, 1000)
            if problem is not None:
                out.append(RowResult([], problem))
                continue
            hit = EXACT_TERMS.get(str(text).strip().lower())
            out.append(RowResult([cand(hit, 1.0)] if hit else [cand("T:0007", 0.3)]))
        return out

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        return [r.candidates for r in self.normalize_rows(texts, k)]

    def normalize(self, text: str, k: int = 5) -> list[Candidate]:
        return self.normalize_batch([text], k)[0]


def test_context_matcher_searches_each_distinct_text_once_and_marks_expanded_answers() -> None:
    fake = ExactMatcher()
    expansions = [
        Expansion("Sugar diabetes", "SD"),  # expanded wins (1.0 > 0.3)
        Expansion("HTN", None),  # nothing expanded: searched as is
        Expansion("Sugar diabetes", "SD"),
        Expansion("dermatomyositis", "DM"),  # the original holds the exact hit: kept
    ]
    results = ContextMatcher(fake).normalize_expansions(expansions, k=3)
    assert len(fake.calls) == 1 and sorted(map(str, fake.calls[0])) == sorted(
        {"Sugar diabetes", "SD", "HTN", "dermatomyositis", "DM"}
    )
    top = [r.candidates[0] for r in results]
    assert [c.concept_id for c in top] == ["T:0003", "T:0002", "T:0003", "T:0003"]
    assert [c.expanded_from for c in top] == ["SD", None, "SD", None]
    # as a plain matcher it is the wrapped one: no context, no expansion
    assert ContextMatcher(fake).normalize_batch(["SD"])[0][0].concept_id == "T:0007"


@pytest.mark.parametrize("rule", list(ExpansionRule))
def test_a_short_form_the_document_defines_wins_its_tie_with_the_dictionary(
    rule: ExpansionRule,
) -> None:
    # "CD" is a dictionary name (T:0010) and the document defines it as Crohn disease
    # (T:0011): both texts match exactly at 1.0, and the document's meaning must win
    document = "Crohn disease (CD) is a chronic bowel disease. CD flares were frequent."
    texts = ["CD", "CD", "CD"]
    results = ContextMatcher(ExactMatcher(), ExpansionChoice(rule)).normalize_in_context(
        texts, [document, document, None], k=3
    )
    top = [r.candidates[0] for r in results]
    assert [(c.concept_id, c.score) for c in top] == [
        ("T:0011", 1.0),
        ("T:0011", 1.0),
        ("T:0010", 1.0),  # no document: the dictionary's answer
    ]
    assert [c.expanded_from for c in top] == ["CD", "CD", None]


def test_expand_in_context_per_text_and_mode_none() -> None:
    texts = ["SD", "SD", "HTN"]
    got = expand_in_documents(texts, [DOCUMENT, None, DOCUMENT])[0]
    assert got == [Expansion("Sugar diabetes", "SD"), Expansion("SD", None), Expansion("HTN", None)]
    assert expand_in_documents(texts, [DOCUMENT] * 3, "none")[0] == [
        Expansion(t, None) for t in texts
    ]
    with pytest.raises(ValueError, match="3 texts but 1 contexts"):
        expand_in_documents(texts, [DOCUMENT])


# ---------------------------------------------------------------- eval normalize
@pytest.fixture()
def pubtator(tmp_path: Path) -> Path:
    """One PubTator document: "SD" (defined as Sugar diabetes) and "HTN" (not defined)."""
    sd, htn = DOCUMENT.index("SD was"), DOCUMENT.index("HTN")
    lines = [
        f"101|t|{TITLE}",
        f"101|a|{ABSTRACT}",
        f"101\t{sd}\t{sd + 2}\tSD\tDisease\tT:0003",
        f"101\t{htn}\t{htn + 3}\tHTN\tDisease\tT:0002",
        "",
    ]
    path = tmp_path / "tiny_pubtator.txt"
    path.write_text("\n".join(lines))
    return path


@pytest.fixture()
def app() -> typer.Typer:
    return command_app(eval_cmd.register)


def run_eval(app: typer.Typer, *args: str | Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["eval", "normalize", *map(str, args)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_eval_normalize_expands_by_default_on_documents_and_not_with_none(
    app: typer.Typer,
    pubtator: Path,
    tiny_kg_dir: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    base = ["--baseline", "exact", "--kg", tiny_kg_dir, pubtator, "--json"]
    pred = tmp_path / "pred.jsonl"
    on = run_eval(app, *base, "--predictions", pred)
    off = run_eval(app, *base, "--abbreviations", "none")
    assert on["abbreviations"] == "ab3p" and on["acc@1"] == 1.0 and on["n_expanded"] == 1
    assert off["abbreviations"] == "none" and off["acc@1"] == 0.5 and "n_expanded" not in off
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    assert (rows[0]["text"], rows[0]["query"], rows[0]["expanded_from"]) == (
        "SD",
        "Sugar diabetes",
        "SD",
    )
    assert rows[0]["predictions"][0]["expanded_from"] == "SD"
    assert rows[1]["query"] is None and rows[1]["predictions"][0]["expanded_from"] is None
    captured = capfd.readouterr()
    assert "Failed to find sentence" not in captured.out + captured.err


def test_eval_normalize_table_says_which_abbreviation_mode(
    app: typer.Typer, pubtator: Path, tiny_kg_dir: Path
) -> None:
    args = ["eval", "normalize", "--baseline", "exact", "--kg", str(tiny_kg_dir), str(pubtator)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "abbreviations: ab3p" in " ".join(result.stdout.split())


def test_eval_normalize_ab3p_on_a_format_without_documents_says_so(
    app: typer.Typer, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "mentions.tsv"
    path.write_text("T:0003\tdiabetes\n")
    args = ["--baseline", "exact", "--kg", tiny_kg_dir, path, "--json"]
    assert run_eval(app, *args)["abbreviations"] == "none"
    result = CliRunner().invoke(
        app, ["eval", "normalize", *map(str, args), "--abbreviations", "ab3p"]
    )
    assert isinstance(result.exception, InputFormatError)
    assert "holds mentions only, no document text" in str(result.exception)


# ---------------------------------------------------------------- files
def test_files_with_a_document_column_gain_expanded_from(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.jsonl"
    rows = [
        {"mention": "SD", "document": DOCUMENT},
        {"mention": "HTN", "document": DOCUMENT},
        {"mention": "SD", "document": None},
        {"mention": "", "document": DOCUMENT},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    report = normalize_file(
        ExactMatcher(), NormalizeFileSpec.of(src, out, column="mention", k=2, show_progress=False)
    )
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["concept_id"] for r in got] == ["T:0003", "T:0002", "T:0007", None]
    assert [r["expanded_from"] for r in got] == ["SD", None, None, None]
    assert got[0]["candidates"][0]["expanded_from"] == "SD"
    assert got[3]["error"] and report.errors == 1
    assert (report.abbreviations, report.context_column, report.expanded) == ("ab3p", "document", 1)

    plain = tmp_path / "plain.jsonl"
    normalize_file(
        ExactMatcher(),
        NormalizeFileSpec.of(
            src, plain, column="mention", show_progress=False, abbreviations="none"
        ),
    )
    first = json.loads(plain.read_text().splitlines()[0])
    assert first["concept_id"] == "T:0007" and "expanded_from" not in first
    captured = capfd.readouterr()
    assert "Failed to find sentence" not in captured.out + captured.err


def test_a_named_context_column_and_its_errors(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text(f'term,abstract\nSD,"{DOCUMENT}"\n')
    out = tmp_path / "out.csv"
    report = normalize_file(
        ExactMatcher(),
        NormalizeFileSpec.of(src, out, show_progress=False, context_column="abstract"),
    )
    assert report.expanded == 1 and "expanded_from" in out.read_text().splitlines()[0]
    with pytest.raises(InputFormatError, match="no context column 'notes'"):
        normalize_file(
            ExactMatcher(),
            NormalizeFileSpec.of(src, out, show_progress=False, context_column="notes"),
        )
    with pytest.raises(InputFormatError, match="add a 'document' or 'context' column"):
        normalize_file(
            ExactMatcher(),
            NormalizeFileSpec.of(src, out, show_progress=False, abbreviations="ab3p"),
        )


def test_normalize_command_context_column_and_mode_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(normalize_cmd, "_announce_default_index", lambda: None)
    monkeypatch.setattr(search_job, "build", lambda *a, **kw: ExactMatcher())
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    normalize_cmd.register(root)
    src = tmp_path / "in.csv"
    src.write_text(f'mention,abstract\nSD,"{DOCUMENT}"\n')
    out = tmp_path / "out.csv"
    base = ["normalize", "--input", str(src), "--output", str(out), "--column", "mention"]
    result = CliRunner().invoke(root, [*base, "--context-column", "abstract"])
    assert result.exit_code == 0, result.output
    assert "abbreviations ab3p from column 'abstract': 1 rows" in result.stdout
    with out.open(newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["concept_id"], row["expanded_from"]) == ("T:0003", "SD")
    result = CliRunner().invoke(root, [*base, "--abbreviations", "none"])
    assert result.exit_code == 0 and "abbreviations: none" in result.stdout
    assert "expanded_from" not in out.read_text()
    result = CliRunner().invoke(root, ["normalize", "SD", "--context-column", "abstract"])
    assert result.exit_code != 0 and "need --input FILE" in result.output


# ---------------------------------------------------------------- API
def test_api_context_for_one_term_and_one_per_term(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "build", lambda *a, **kw: ExactMatcher())
    one = api.normalize("SD", context=DOCUMENT, k=1)
    assert one[0].concept_id == "T:0003" and one[0].expanded_from == "SD"
    many = api.normalize(["SD", "SD", "HTN"], context=[DOCUMENT, None, DOCUMENT], k=1)
    assert [c[0].concept_id for c in many] == ["T:0003", "T:0007", "T:0002"]
    assert [c[0].expanded_from for c in many] == ["SD", None, None]
    assert api.normalize("SD", k=1)[0].expanded_from is None  # no context: no expansion
    with pytest.raises(ValueError, match="2 terms but 1 contexts"):
        api.normalize(["SD", "HTN"], context=[DOCUMENT])
    with pytest.raises(QueryError):
        api.normalize(["SD", " "], context=DOCUMENT)
