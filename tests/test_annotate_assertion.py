"""Assertion flags (negated, hypothetical, historical, family) from ConText-style rules."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from termnorm.annotate import Assertion, AssertionRules, Span, assert_spans
from termnorm.annotate.assertion_rules import (
    AssertionRule,
    Category,
    Direction,
    RuleLanguage,
    default_rules_path,
    literal_key,
)

HEADER = "literal\tcategory\tdirection\tmax_scope\n"
NEGATED = Assertion(negated=True)
HYPOTHETICAL = Assertion(hypothetical=True)
HISTORICAL = Assertion(historical=True)
FAMILY = Assertion(family=True)
PLAIN = Assertion()


def spans_of(text: str, *mentions: str) -> list[Span]:
    """A span for the first occurrence of each mention in ``text``."""
    spans = []
    for mention in mentions:
        start = text.index(mention)
        spans.append(Span(start, start + len(mention), mention, "test"))
    return spans


def flags(text: str, *mentions: str, rules: AssertionRules | None = None) -> list[Assertion]:
    """The assertion of each mention of ``text``, with the fallback sentence splitter."""
    return assert_spans(text, spans_of(text, *mentions), rules)


def write_rules(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "rules.tsv"
    path.write_text(HEADER + rows, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "mention", "expected"),
    [
        ("No fever but cough.", "fever", NEGATED),
        ("No fever but cough.", "cough", PLAIN),  # "but" ends the scope of "no"
        ("The patient is without edema.", "edema", NEGATED),
        ("Negative for malignancy.", "malignancy", NEGATED),
        ("There is no evidence of pneumothorax.", "pneumothorax", NEGATED),
        ("Rule out pneumonia.", "pneumonia", HYPOTHETICAL),  # a work-up still to be done
        ("Pneumonia was ruled out.", "Pneumonia", NEGATED),  # backward
        ("CT ruled out pulmonary embolism.", "pulmonary embolism", NEGATED),  # forward
        ("Sepsis is unlikely.", "Sepsis", NEGATED),  # backward
        ("Her mother had breast cancer.", "breast cancer", FAMILY),
        ("Breast cancer in her mother.", "Breast cancer", FAMILY),  # backward
        ("If chest pain recurs, return.", "chest pain", HYPOTHETICAL),
        ("Patient should avoid alcohol.", "alcohol", HYPOTHETICAL),
        ("Status post appendectomy.", "appendectomy", HISTORICAL),
        ("He had asthma as a child.", "asthma", HISTORICAL),  # backward
        ("Family history of diabetes.", "diabetes", FAMILY),  # not also historical
        ("No history of stroke.", "stroke", NEGATED),  # "no history of" is one trigger
        ("Patient has fever.", "fever", PLAIN),
    ],
)
def test_flags_follow_the_context_rules(text: str, mention: str, expected: Assertion) -> None:
    assert flags(text, mention) == [expected]


@pytest.mark.parametrize(
    ("text", "mention"),
    [
        ("no increase in seizures", "seizures"),
        ("Not only headache but nausea.", "headache"),
        ("Gram negative rods were seen.", "rods"),
        ("No change in the size of the nodule.", "nodule"),
        ("History of present illness: cough.", "cough"),
    ],
)
def test_pseudo_triggers_hide_the_triggers_inside_them(text: str, mention: str) -> None:
    assert flags(text, mention) == [PLAIN]


@pytest.mark.parametrize(
    ("text", "mention", "expected"),
    [
        ("Possible hypertension.", "hypertension", HYPOTHETICAL),
        ("Probable viral pharyngitis.", "pharyngitis", HYPOTHETICAL),
        ("Likely community acquired pneumonia.", "pneumonia", HYPOTHETICAL),
        ("Questionable seizure activity overnight.", "seizure", HYPOTHETICAL),
        ("CT concerning for appendicitis.", "appendicitis", HYPOTHETICAL),
        ("Suspected pulmonary embolism.", "pulmonary embolism", HYPOTHETICAL),
        ("Diabetic nephropathy suspected.", "Diabetic nephropathy", HYPOTHETICAL),  # backward
        ("Diabetic nephropathy suspected.", "nephropathy", HYPOTHETICAL),  # HPO's span
        ("Meningitis cannot be ruled out.", "Meningitis", HYPOTHETICAL),
        ("Cannot rule out sepsis.", "sepsis", HYPOTHETICAL),
        ("Malignancy not excluded.", "Malignancy", HYPOTHETICAL),
        ("Pulmonary embolism was excluded.", "Pulmonary embolism", NEGATED),
        ("Pneumonia less likely.", "Pneumonia", NEGATED),
        ("Hypokalemia resolved.", "Hypokalemia", HISTORICAL),  # resolved: no longer present
        ("Her rash has resolved.", "rash", HISTORICAL),
        ("Resolution of the pleural effusion.", "pleural effusion", HISTORICAL),
        ("Lymphoma in remission.", "Lymphoma", HISTORICAL),
    ],
)
def test_hedges_and_post_modifiers_flag_their_mention(
    text: str, mention: str, expected: Assertion
) -> None:
    assert flags(text, mention) == [expected]


@pytest.mark.parametrize(
    ("text", "mentions", "expected"),
    [
        ("No change in hypertension.", ("hypertension",), [PLAIN]),
        ("Patient resolved to continue metformin for diabetes.", ("diabetes",), [PLAIN]),
        ("Hypokalemia not resolved.", ("Hypokalemia",), [PLAIN]),  # still present
        ("Edema partially resolved.", ("Edema",), [PLAIN]),
        ("Patients with diabetes were excluded from the study.", ("diabetes",), [PLAIN]),
        ("Follow up as soon as possible for the anemia.", ("anemia",), [PLAIN]),
        # the cause is the hedge, not the symptom it explains
        ("Cough likely due to reflux.", ("Cough", "reflux"), [PLAIN, HYPOTHETICAL]),
        # a comma before "suspected" keeps it from reaching back to the finding before it
        ("Fever, suspected pneumonia.", ("Fever", "pneumonia"), [PLAIN, HYPOTHETICAL]),
        # a termination trigger ends a post-modifier's scope
        ("Asthma while hypokalemia resolved.", ("Asthma", "hypokalemia"), [PLAIN, HISTORICAL]),
        # a post-modifier reaches at most four words back
        (
            "Anemia with chronic kidney disease and nausea resolved.",
            ("Anemia", "nausea"),
            [PLAIN, HISTORICAL],
        ),
    ],
)
def test_hedge_false_friends_and_scope_limits(
    text: str, mentions: tuple[str, ...], expected: list[Assertion]
) -> None:
    assert flags(text, *mentions) == expected


def test_semicolon_ends_the_negation_and_history_follows() -> None:
    text = "Patient denies chest pain; history of MI."
    assert flags(text, "chest pain", "MI") == [NEGATED, HISTORICAL]


def test_semicolon_terminates_a_scope_inside_a_callers_sentence() -> None:
    text = "Patient denies chest pain; reports cough."
    one_sentence = [(0, len(text))]
    got = assert_spans(text, spans_of(text, "chest pain", "cough"), sentences=one_sentence)
    assert got == [NEGATED, PLAIN]


def test_a_termination_trigger_stops_a_backward_scope() -> None:
    assert flags("Cough but sepsis is unlikely.", "Cough", "sepsis") == [PLAIN, NEGATED]


def test_a_rule_file_with_crlf_and_a_byte_order_mark_reads(tmp_path: Path) -> None:
    path = tmp_path / "rules.tsv"
    path.write_bytes(
        ("\ufeff" + HEADER + "nil\tNEGATED_EXISTENCE\tFORWARD\t\n").replace("\n", "\r\n").encode()
    )
    rules = AssertionRules.from_file(path)
    assert rules.rules == (AssertionRule("nil", Category.NEGATED_EXISTENCE, Direction.FORWARD),)


def test_a_scope_stops_at_the_sentence_edge() -> None:
    assert flags("No fever. Cough present.", "fever", "Cough") == [NEGATED, PLAIN]


def test_callers_sentences_decide_where_a_scope_ends() -> None:
    text = "No fever, cough present"
    spans = spans_of(text, "fever", "cough")
    assert assert_spans(text, spans) == [NEGATED, NEGATED]
    split = [(0, 9), (9, len(text))]
    assert assert_spans(text, spans, sentences=split) == [NEGATED, PLAIN]


def test_matching_ignores_case_and_respects_word_boundaries() -> None:
    assert flags("NO  FEVER.", "FEVER") == [NEGATED]
    # "no" inside "nodule" and "Snow" is no trigger
    assert flags("Nodule near Snow sign.", "sign") == [PLAIN]


def _plain_alternation(rules: AssertionRules) -> re.Pattern[str]:
    """The reference: every literal tried at every place, the longest first."""
    keys = sorted({literal_key(r.literal) for r in rules.rules}, key=lambda k: (-len(k), k))
    return re.compile(
        "|".join(
            (r"(?<!\w)" if re.match(r"\w", key) else "")
            + r"\s+".join(re.escape(word) for word in key.split(" ")).replace("'", "['\u2019]")
            + (r"(?!\w)" if re.search(r"\w$", key) else "")
            for key in keys
        ),
        re.IGNORECASE,
    )


TRIGGER_TEXTS = (
    "No fever; no  evidence of\ncough. Denies pain, r/o sepsis, not ruled out; nodule, Snow.",
    "History of asthma. Mother's sister: diabetes. Pas d\u2019allergie; pas d'asthme, sans fi\u00e8vre.",
    "Kein Fieber, keine Hinweise auf Asthma. Sin fiebre, no hay dolor. Geen koorts, geen pijn.",
    "NO  EVIDENCE OF rash? Possible hypertension, suspected nephropathy; resolved hypokalemia.",
)


@pytest.mark.parametrize("language", list(RuleLanguage))
def test_triggers_are_the_plain_alternations_longest_matches(language: RuleLanguage) -> None:
    rules = AssertionRules.for_language(language)
    reference = _plain_alternation(rules)
    text = " ".join(TRIGGER_TEXTS)
    want = [(m.start(), m.end()) for m in reference.finditer(text)]
    assert len(want) >= 3  # the texts hold triggers of every language's rules
    assert [(a, b) for a, b, _ in rules.finditer(text, 0, len(text))] == want


def test_a_trigger_prefix_of_another_yields_to_the_longer_one() -> None:
    rules = AssertionRules(
        tuple(
            AssertionRule(literal, Category.NEGATED_EXISTENCE, Direction.FORWARD)
            for literal in ("no", "no evidence", "no evidence of", "pas d'", ";x", "r/o")
        )
    )
    text = "No evidence  of x; No evidence ofx; nope;x r/o pas d\u2019y no."
    got = [text[a:b] for a, b, _ in rules.finditer(text, 0, len(text))]
    assert got == ["No evidence  of", "No evidence", ";x", "r/o", "pas d\u2019", "no"]
    assert got == [m.group() for m in _plain_alternation(rules).finditer(text)]


def test_a_span_inside_a_trigger_is_not_flagged_by_it() -> None:
    text = "Family history of diabetes."
    assert flags(text, "Family history", "diabetes") == [PLAIN, FAMILY]


def test_offsets_are_code_points_of_the_original_text() -> None:
    text = "Pt 🙂 denies\u00a0pain.\r\nMother: asthma."
    got = flags(text, "pain", "asthma")
    assert got == [NEGATED, FAMILY]


def test_max_scope_limits_the_words_in_scope(tmp_path: Path) -> None:
    rules = AssertionRules.from_file(
        write_rules(tmp_path, "denies\tNEGATED_EXISTENCE\tFORWARD\t2\n")
    )
    text = "Patient denies chest pain and shortness of breath."
    got = flags(text, "chest pain", "breath", rules=rules)
    assert got == [NEGATED, PLAIN]


def test_a_user_file_extending_the_defaults_changes_the_outcome(tmp_path: Path) -> None:
    text = "Screen shows nil rash. Rule out measles."
    assert flags(text, "rash", "measles") == [PLAIN, HYPOTHETICAL]
    path = write_rules(
        tmp_path,
        "nil\tnegated_existence\tforward\t\nrule out\tNEGATED_EXISTENCE\tFORWARD\t\n",
    )
    extended = AssertionRules.default().extend(AssertionRules.from_file(path))
    assert flags(text, "rash", "measles", rules=extended) == [NEGATED, NEGATED]
    # the defaults keep working beside the user's rules
    assert flags("No fever.", "fever", rules=extended) == [NEGATED]


def test_a_user_file_alone_replaces_the_defaults(tmp_path: Path) -> None:
    rules = AssertionRules.from_file(write_rules(tmp_path, "nil\tNEGATED_EXISTENCE\tFORWARD\t\n"))
    assert flags("No fever, nil rash.", "fever", "rash", rules=rules) == [PLAIN, NEGATED]


def test_extend_takes_rule_objects() -> None:
    rule = AssertionRule("nil", Category.NEGATED_EXISTENCE, Direction.FORWARD)
    rules = AssertionRules.default().extend([rule])
    assert flags("Nil rash.", "rash", rules=rules) == [NEGATED]


def test_the_shipped_rules_cover_every_category_and_ship_as_package_data() -> None:
    rules = AssertionRules.default()
    assert default_rules_path().name == "context_rules.tsv"
    assert {rule.category for rule in rules.rules} == set(Category)
    literals = {rule.literal for rule in rules.rules}
    assert {"no", "denies", "without", "negative for", "if", "history of", "mother"} <= literals
    assert {"no increase", "not only", "gram negative", "but", "however", ";"} <= literals


def test_as_dict_names_the_four_flags() -> None:
    assert Assertion(negated=True, family=True).as_dict() == {
        "negated": True,
        "hypothetical": False,
        "historical": False,
        "family": True,
    }


def test_a_span_from_another_text_is_refused() -> None:
    with pytest.raises(ValueError, match=r"is not in this text.*pass the text the detector read"):
        assert_spans("No fever.", [Span(3, 8, "cough", "test")])


def test_a_span_outside_the_sentences_is_refused() -> None:
    text = "No fever. Cough."
    with pytest.raises(ValueError, match="lies in no sentence; pass sentences that cover"):
        assert_spans(text, spans_of(text, "Cough"), sentences=[(0, 9)])


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("no\tNEGATED\tFORWARD\t\n", r"rules.tsv:2: unknown category 'NEGATED' \(choose from"),
        ("no\tNEGATED_EXISTENCE\tAHEAD\t\n", r"rules.tsv:2: unknown direction 'AHEAD'"),
        ("no\tNEGATED_EXISTENCE\t\t\n", r"rules.tsv:2: .*needs a direction"),
        ("no\tNEGATED_EXISTENCE\tFORWARD\tfive\n", r"rules.tsv:2: max_scope 'five' is not a"),
        ("no\tNEGATED_EXISTENCE\tFORWARD\t0\n", r"rules.tsv:2: .*max_scope must be a positive"),
        ("but\tTERMINATE\tFORWARD\t\n", r"rules.tsv:2: .*TERMINATE rule has no direction"),
        ("no\tNEGATED_EXISTENCE\tFORWARD\n", r"rules.tsv:2: expected 4 tab-separated cells, got 3"),
        ("\tNEGATED_EXISTENCE\tFORWARD\t\n", r"rules.tsv:2: .*needs a non-empty literal"),
        (
            "No\tNEGATED_EXISTENCE\tFORWARD\t\nno\tHYPOTHETICAL\tFORWARD\t\n",
            r"rules.tsv:3: the literal 'no' already has a rule on line 2",
        ),
    ],
)
def test_a_bad_rule_row_is_named_by_file_and_line(tmp_path: Path, rows: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AssertionRules.from_file(write_rules(tmp_path, rows))


def test_a_rule_file_without_the_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rules.tsv"
    path.write_text("no\tNEGATED_EXISTENCE\tFORWARD\t\n", encoding="utf-8")
    with pytest.raises(ValueError, match="first row must be the header literal<TAB>category"):
        AssertionRules.from_file(path)


def test_a_missing_rule_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no assertion rule file at .*nope\.tsv"):
        AssertionRules.from_file(tmp_path / "nope.tsv")


def _assertion_eval() -> ModuleType:
    """``benchmarks/assertion_eval.py``, loaded as a module."""
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "assertion_eval.py"
    spec = importlib.util.spec_from_file_location("assertion_eval_bench", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_assertion_table_scores_each_flag_per_rule_set() -> None:
    bench = _assertion_eval()
    rows = [
        ("en", "Possible hypertension.", "hypertension", frozenset({"hypothetical"})),
        ("en", "Hypokalemia resolved.", "Hypokalemia", frozenset({"historical"})),
        ("en", "Denies cough.", "cough", frozenset({"negated"})),
    ]
    runs = {"shipped": AssertionRules.default(), "empty": AssertionRules(())}
    _, _, shipped, empty = bench.notes_table(rows, runs)
    assert shipped == "| shipped | 1.00 / 1.00 | 1.00 / 1.00 | 1.00 / 1.00 | - / - |"
    assert empty == "| empty | - / 0.00 | - / 0.00 | - / 0.00 | - / - |"


def test_the_note_sentences_cover_every_flag_and_plain_mentions() -> None:
    rows = _assertion_eval().read_sentences(_assertion_eval().NOTES)
    assert len(rows) >= 60
    assert set().union(*(row[3] for row in rows)) == {
        "negated",
        "hypothetical",
        "historical",
        "family",
    }
    assert sum(not row[3] for row in rows) >= 15
