"""Assertion rules in French, German, Spanish and Dutch, and how a document's language is
chosen (declared, a JSON Lines ``lang``, detected, English fallback)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from _cli import run_main
from termnorm.annotate.assertion_rules import AssertionRules, rules_path
from termnorm.annotate.formats import read_inputs
from termnorm.annotate.languages import (
    LanguageChoice,
    LanguageSource,
    RuleLanguage,
    choose_language,
    detect_language,
    parse_language,
)
from termnorm.annotate.pipeline import Annotator
from termnorm.search.spec import PipelineSpec

SENTENCES = Path(__file__).parent / "data" / "assertion_sentences.tsv"
SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "assertion_languages.py"
FLAGS = ("negated", "hypothetical", "historical", "family")


def _benchmark() -> ModuleType:
    """``benchmarks/assertion_languages.py``, whose sentence reader and flag function the
    figures of docs/annotate.md come from."""
    spec = importlib.util.spec_from_file_location("assertion_languages_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _benchmark()


def _sentences() -> list[tuple[str, str, str, frozenset[str]]]:
    """The rows of the hand-made sentence file: language, sentence, mention, flags."""
    return BENCH.read_sentences(SENTENCES)  # type: ignore[no-any-return]


def _flags(text: str, mention: str, rules: AssertionRules) -> frozenset[str]:
    return BENCH.predicted(text, mention, rules)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("lang", "sentence", "mention", "expected"), _sentences())
def test_each_language_flags_its_hand_made_sentences(
    lang: str, sentence: str, mention: str, expected: frozenset[str]
) -> None:
    assert _flags(sentence, mention, AssertionRules.for_language(lang)) == expected


@pytest.mark.parametrize("lang", ["fr", "de", "es", "nl"])
def test_every_language_has_eight_sentences_covering_each_flag(lang: str) -> None:
    rows = [row for row in _sentences() if row[0] == lang]
    assert len(rows) >= 8
    covered = set().union(*(row[3] for row in rows))
    assert covered == set(FLAGS)
    assert any(not row[3] for row in rows)  # plain affirmed and pseudo/termination cases


def test_english_rules_miss_the_french_negation_the_french_rules_find() -> None:
    text = "Pas d'hypertension."
    assert _flags(text, "hypertension", AssertionRules.default()) == frozenset()
    assert _flags(text, "hypertension", AssertionRules.for_language("fr")) == {"negated"}


def test_accents_case_and_typographic_apostrophes_match() -> None:
    french = AssertionRules.for_language(RuleLanguage.FR)
    assert _flags("PAS D’HYPERTENSION.", "HYPERTENSION", french) == {"negated"}
    assert _flags("Antécédents d'asthme.", "asthme", french) == {"historical"}
    german = AssertionRules.for_language("de")
    assert _flags("Großvater mit Diabetes.", "Diabetes", german) == {"family"}


def test_a_language_without_rules_is_refused_by_name() -> None:
    with pytest.raises(
        ValueError, match=r"no shipped assertion rules for the language 'it' \(known: en, fr"
    ):
        AssertionRules.for_language("it")
    assert rules_path("fr").name == "context_rules_fr.tsv"
    assert rules_path("en").name == "context_rules.tsv"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pas d'hypertension.", "fr"),
        ("Le patient présente une toux sans fièvre.", "fr"),
        ("Kein Fieber, keine Dyspnoe.", "de"),
        ("Der Patient klagt über Husten.", "de"),
        ("Paciente sin dolor torácico.", "es"),
        ("El paciente niega disnea.", "es"),
        ("Geen koorts.", "nl"),
        ("De patiënt heeft geen pijn.", "nl"),
        ("The patient denies chest pain.", "en"),
        ("No fever.", "en"),
    ],
)
def test_language_is_detected_from_short_sentences(text: str, expected: str) -> None:
    assert detect_language(text) == RuleLanguage(expected)


def test_the_choice_prefers_the_declared_language_then_detection_then_english() -> None:
    text = "Pas d'hypertension."
    assert choose_language(text) == LanguageChoice(RuleLanguage.FR, LanguageSource.DETECTED)
    assert choose_language(text, "auto") == choose_language(text)
    assert choose_language(text, "en") == LanguageChoice(RuleLanguage.EN, LanguageSource.DECLARED)
    assert choose_language(text, "DE-at").language is RuleLanguage.DE
    assert choose_language("Diabète", None) == LanguageChoice(
        RuleLanguage.EN, LanguageSource.FALLBACK
    )
    assert choose_language(text, "it") == LanguageChoice(
        RuleLanguage.EN, LanguageSource.FALLBACK, "it"
    )
    with pytest.raises(ValueError, match="not a language tag"):
        parse_language(" ")


def test_jsonl_documents_carry_their_lang(tmp_path: Path) -> None:
    source = tmp_path / "docs.jsonl"
    rows = [
        {"id": "a", "text": "x", "lang": "fr"},
        {"id": "b", "text": "y"},
        {"id": "c", "text": "z", "lang": 3},
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    docs = list(read_inputs(str(source)))
    assert [(d.doc_id, d.lang) for d in docs] == [("a", "fr"), ("b", None), ("c", None)]
    assert docs[2].error is not None and "'lang' is 3" in docs[2].error


@pytest.fixture()
def annotator(index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Annotator:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    return Annotator(PipelineSpec(index=index_dir, min_score=0.99))


def test_pas_d_hypertension_is_annotated_negated_with_its_language(annotator: Annotator) -> None:
    (found,) = annotator.annotate("Pas d'hypertension.", "d1")
    assert (found.text, found.concept_id, found.negated) == ("hypertension", "T:0002", True)
    provenance = found.to_dict()["provenance"]
    assert provenance["assertion_language"] == "fr"
    assert provenance["assertion_language_source"] == "detected"


def test_a_declared_language_wins_and_a_document_lang_wins_over_it(index_dir: Path) -> None:
    english = Annotator(PipelineSpec(index=index_dir, min_score=0.99), language="en")
    (found,) = english.annotate("Pas d'hypertension.")
    assert not found.negated
    assert (found.assertion_language, found.assertion_language_source) == ("en", "declared")
    (doc,) = english.annotate_many([("d", "Pas d'hypertension.", "fr-FR")])
    assert doc.annotations[0].negated and doc.annotations[0].assertion_language == "fr"
    (unruled,) = english.annotate_many([("d", "Pas d'hypertension.", "it")])
    assert unruled.annotations[0].assertion_language_source == "fallback"
    assert unruled.warning is not None and "'it'" in unruled.warning


def test_cli_language_option_and_jsonl_lang(
    index_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    base = ["--index", str(index_dir), "--min-score", "0.99"]
    source = tmp_path / "docs.jsonl"
    docs = [
        {"id": "a", "text": "Pas d'hypertension."},
        {"id": "b", "text": "Pas d'hypertension.", "lang": "fr"},
    ]
    source.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    code, out, err = run_main(["annotate", str(source), *base, "--language", "en"], capsys)
    assert code == 0, err
    rows = {row["doc_id"]: row for row in map(json.loads, out.splitlines())}
    assert not rows["a"]["negated"] and rows["a"]["provenance"]["assertion_language"] == "en"
    assert rows["b"]["negated"] and rows["b"]["provenance"]["assertion_language"] == "fr"
    code, out, err = run_main(["annotate", "Pas d'hypertension.", *base], capsys)
    assert code == 0 and "negated" in out and "assertion rules: fr (detected)" in err
    code, _, err = run_main(["annotate", str(source), *base, "--language", ""], capsys)
    assert code != 0 and "--language" in err


def test_the_benchmark_table_counts_precision_recall_and_detection() -> None:
    rows = [
        ("fr", "Pas de fièvre.", "fièvre", frozenset({"negated"})),
        ("fr", "Toux.", "Toux", frozenset({"negated"})),
        ("fr", "Pas de toux.", "toux", frozenset()),
    ]
    (line,) = BENCH.table(rows, detect=False)
    assert line == "| fr | 3 | 0.50 / 0.50 | - / - | - / - | - / - | 2/3 |"
