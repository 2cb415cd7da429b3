"""Word variants in the dictionary detector: Latin and irregular plurals, adjectives of nouns,
each taken only when the variant is a name word; a list's comma ends a match."""

from __future__ import annotations

import pytest

from termnorm.annotate import DictionaryDetector
from termnorm.annotate.variants import variant_keys

NAMES = [
    ("HP:1", "Nevus"),
    ("HP:2", "Polydactyly"),
    ("HP:3", "Ataxia"),
    ("HP:4", "Ataxic gait"),
    ("HP:5", "Abnormal phalanx"),
    ("HP:6", "Thin philtrum"),
    ("HP:7", "Long philtrum"),
    ("HP:8", "Kidneys, polycystic"),
    ("HP:9", "1,25-dihydroxyvitamin D deficiency"),
    ("HP:10", "Hypoplastic tooth"),
]


@pytest.fixture(scope="module")
def plain() -> DictionaryDetector:
    return DictionaryDetector.from_names(NAMES)


def found(detector: DictionaryDetector, text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.text, s.concept_ids) for s in detector.detect(text)]


@pytest.mark.parametrize(
    ("word", "keys"),
    [
        ("nevi", ("nevus",)),
        ("teeth", ("tooth",)),
        ("ataxic", ("ataxia", "ataxy")),
        ("polydactylous", ("polydactyly",)),
        ("ventricular", ("ventricl",)),
        ("DM", ()),  # under 4 letters
        ("T2DM", ()),  # not alphabetic
    ],
)
def test_variant_keys_are_the_keys_of_each_suffix_pair(word: str, keys: tuple[str, ...]) -> None:
    assert variant_keys(word) == keys


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("multiple nevi", [("nevi", ("HP:1",))]),  # a Latin plural, no name writes it
        ("both were polydactylous", [("polydactylous", ("HP:2",))]),  # an adjective
        ("hypoplastic teeth", [("hypoplastic teeth", ("HP:10",))]),  # an irregular plural
        ("abnormal phalanges", [("abnormal phalanges", ("HP:5",))]),
        # "ataxic" and "ataxia" are both name words: with variants they are one word
        ("gait ataxia", [("gait ataxia", ("HP:4",))]),
    ],
)
def test_a_variant_of_a_name_word_matches_with_the_rule_only(
    plain: DictionaryDetector, text: str, expected: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert found(plain.with_rules(variants=True), text) == expected
    assert found(plain, text) != expected


def test_a_variant_no_name_holds_still_blocks(plain: DictionaryDetector) -> None:
    # "nevoid" has no variant among the names: it blocks as an unknown word does
    assert found(plain.with_rules(variants=True), "nevoid") == []


def test_variant_pairs_survive_the_cache(tmp_path) -> None:
    built = DictionaryDetector.from_names(NAMES, cache=tmp_path)
    (folder,) = tmp_path.iterdir()
    loaded = DictionaryDetector.load(folder)
    assert loaded.compiled.variant_pairs == built.compiled.variant_pairs != []
    assert found(loaded.with_rules(variants=True), "gait ataxia") == [("gait ataxia", ("HP:4",))]


def test_a_list_comma_ends_a_match(plain: DictionaryDetector) -> None:
    # not "philtrum, thin" read as "Thin philtrum", which hid "long philtrum"
    text = "long philtrum, thin upper lip"
    assert found(plain, text) == [("long philtrum", ("HP:7",))]


def test_a_name_with_a_comma_and_a_comma_between_digits_still_match(
    plain: DictionaryDetector,
) -> None:
    assert found(plain, "polycystic kidneys") == [("polycystic kidneys", ("HP:8",))]
    text = "1,25-dihydroxyvitamin D deficiency"
    assert found(plain, text) == [(text, ("HP:9",))]
