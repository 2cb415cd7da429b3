"""Paraphrases in the dictionary detector: the words of a shipped group (the generic words of
"Abnormality of X", an organ and its adjective, the words of quantity) read as one name word."""

from __future__ import annotations

import pytest

from termnorm.annotate import DictionaryDetector
from termnorm.annotate.dictionary import merge_variants
from termnorm.annotate.spec import AnnotateSpec
from termnorm.annotate.variants import optional_words, paraphrase_groups, paraphrase_rules

NAMES = [
    ("HP:1", "Abnormality of the skin"),
    ("HP:2", "Abnormality of the eye"),
    ("HP:3", "Numerous nevi"),
    ("HP:4", "Abnormality of the ribs"),
    ("HP:5", "Decreased IgG2 level"),
    ("HP:6", "Skin tag"),
]

ALL = ("generic", "organ", "quantity")


@pytest.fixture(scope="module")
def plain() -> DictionaryDetector:
    return DictionaryDetector.from_names(NAMES)


def found(detector: DictionaryDetector, text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.text, s.concept_ids) for s in detector.detect(text)]


def test_the_shipped_groups_are_single_words_each_in_one_group() -> None:
    groups = paraphrase_groups(paraphrase_rules("generic,organ,quantity"))
    words = [w for group in groups for w in group]
    assert len(groups) >= 20
    assert all(len(group) >= 2 for group in groups)
    assert all(w.isalpha() and w == w.lower() for w in words)
    assert len(words) == len(set(words))  # a word in two groups would join them


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an organ's adjective and a generic word of "Abnormality of X", in the plural
        ("examined for cutaneous abnormalities.", [("cutaneous abnormalities", ("HP:1",))]),
        ("ocular anomalies were absent", [("ocular anomalies", ("HP:2",))]),
        ("she had abnormal ribs", [("abnormal ribs", ("HP:4",))]),
        ("a defect of the skin", [("defect of the skin", ("HP:1",))]),
        # words of quantity
        ("multiple nevi", [("multiple nevi", ("HP:3",))]),
        ("reduced IgG2 levels", [("reduced IgG2 levels", ("HP:5",))]),
    ],
)
def test_a_paraphrase_of_a_name_matches_with_the_rule_only(
    plain: DictionaryDetector, text: str, expected: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert found(plain.with_rules(variants=True, paraphrases=ALL), text) == expected
    assert found(plain.with_rules(variants=True), text) != expected


def test_a_group_joins_only_its_own_words(plain: DictionaryDetector) -> None:
    ruled = plain.with_rules(paraphrases=ALL)
    # the eye's group does not reach the skin's: each abnormality keeps its organ
    assert found(ruled, "skin and ocular anomalies") == [("ocular anomalies", ("HP:2",))]
    assert found(ruled, "cutaneous tags") == [("cutaneous tags", ("HP:6",))]
    # no name holds a kidney word: "renal" stays a word in no name, and blocks
    assert found(ruled, "renal abnormality") == []


def test_a_group_with_no_name_word_adds_no_key() -> None:
    compiled = DictionaryDetector.from_names([("X:1", "Abnormality of the skin")]).compiled
    merged = merge_variants(compiled, variants=False, groups=[("kidney", "renal")])
    assert merged.vocab == compiled.vocab
    merged = merge_variants(compiled, variants=False, groups=[("skin", "cutaneous")])
    assert merged.vocab["cutaneous"] == merged.vocab["skin"]


def test_rules_give_one_detector_each_and_keep_the_names(plain: DictionaryDetector) -> None:
    ruled = plain.with_rules(paraphrases=ALL)
    assert ruled is plain.with_rules(paraphrases=ALL)
    assert ruled.compiled is plain.compiled
    assert (ruled.variants, ruled.paraphrases) == (False, ALL)
    assert found(plain, "cutaneous abnormalities") == []


def test_each_rule_reads_only_its_own_groups(plain: DictionaryDetector) -> None:
    quantity = plain.with_rules(paraphrases=("quantity",))
    assert found(quantity, "multiple nevi") == [("multiple nevi", ("HP:3",))]
    assert found(quantity, "cutaneous abnormalities") == []
    organ = plain.with_rules(paraphrases=("organ",))
    assert found(organ, "cutaneous abnormality") == [("cutaneous abnormality", ("HP:1",))]
    assert found(organ, "cutaneous anomaly") == []  # anomaly is the generic rule's


@pytest.mark.parametrize(
    ("value", "rules"),
    [("none", ()), ("", ()), ("quantity", ("quantity",)), ("organ, generic", ("generic", "organ"))],
)
def test_paraphrase_rules_read_a_comma_separated_value(value: str, rules: tuple[str, ...]) -> None:
    assert paraphrase_rules(value) == rules


def test_an_unknown_rule_is_refused_naming_the_option_and_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"--paraphrases: unknown paraphrase rule\(s\) organs; "):
        AnnotateSpec(paraphrases="organs")
    with pytest.raises(ValueError, match="known: generic, organ, quantity, optional or none"):
        paraphrase_rules("quantity,sizes")


QUALIFIED = [
    ("HP:11", "Localized skin lesion"),
    ("HP:12", "Generalized muscle weakness"),
    ("HP:13", "Muscle weakness"),
    ("HP:14", "Recurrent bacterial infections"),
    ("D:1", "Multiple sclerosis"),
]


def test_an_optional_qualifier_may_be_left_out_of_a_longer_name() -> None:
    ruled = DictionaryDetector.from_names(QUALIFIED).with_rules(paraphrases=("optional",))
    assert found(ruled, "frequency of skin lesions") == [("skin lesions", ("HP:11",))]
    assert found(ruled, "localized skin lesions") == [("localized skin lesions", ("HP:11",))]
    # a name written without the qualifier keeps its own concept
    assert found(ruled, "muscle weakness") == [("muscle weakness", ("HP:13",))]
    # "recurrent" names the course: it is not optional
    assert found(ruled, "bacterial infections") == []
    # a two-word name is not cut to one word: "sclerosis" is no name
    assert found(ruled, "sclerosis") == []
    plain = DictionaryDetector.from_names(QUALIFIED)
    assert found(plain, "frequency of skin lesions") == []
    assert optional_words(("quantity",)) == ()
    assert "localized" in optional_words(("optional",))
