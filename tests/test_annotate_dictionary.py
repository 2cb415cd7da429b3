"""The dictionary detector: token keys, matching variants, overlaps, exact offsets, cache."""

from __future__ import annotations

import json
import random

import pytest

from _index_fakes import KeyedEncoder
from termnorm.annotate import Detector, DictionaryDetector, Span
from termnorm.annotate import dictionary as dictionary_module
from termnorm.annotate.dictionary import name_keys
from termnorm.annotate.tokens import (
    BARRIERS,
    STOP_WORDS,
    acronym_key,
    content_key,
    token_key,
    tokenize,
)
from termnorm.errors import ArtifactMismatchError
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph

NAMES = [
    ("HP:1", "Polycystic kidney disease"),
    ("HP:2", "Polycystic kidney"),
    ("HP:3", "Kidney cyst"),
    ("HP:4", "Renal cyst"),
    ("HP:5", "Abnormality of the kidney"),
    ("HP:6", "Sjögren syndrome"),
    ("HP:7", "Dilated cardiomyopathy"),
    ("HP:8", "Hand foot"),
    ("HP:9", "Vitamin A deficiency"),
    ("HP:10", "Vitamin deficiency"),
    ("HP:11", "MI"),  # two characters, but an acronym: kept, matched in capitals only
    ("HP:16", "ab"),  # too short: skipped
    ("HP:17", "WAS"),  # an acronym that spells a common word
    ("HP:18", "ALL relapse"),  # a mixed-case name: its acronym keeps its case
    ("HP:19", "ATRIOVENTRICULAR SEPTAL DEFECT"),  # all capitals: no word is an acronym
    ("HP:12", "of the"),  # stop words only: skipped
    ("HP:13", "Kidney cysts"),  # same key as HP:3: an ambiguous name
    ("HP:14", "Preauricular pit"),
    ("HP:15", "Non-progressive ataxia"),
]


@pytest.fixture(scope="module")
def detector() -> DictionaryDetector:
    return DictionaryDetector.from_names(NAMES)


def found(detector: DictionaryDetector, text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.text, s.concept_ids) for s in detector.detect(text)]


# ---------------------------------------------------------------------- keys
@pytest.mark.parametrize(
    ("word", "key"),
    [
        ("Kidneys", "kidney"),
        ("kidney", "kidney"),
        ("Anomalies", "anomaly"),
        ("anomaly", "anomaly"),
        ("abnormalities", "abnormality"),
        ("dilated", "dilat"),
        ("dilating", "dilat"),
        ("dilate", "dilat"),
        ("diseases", "diseas"),
        ("disease", "diseas"),
        ("stopped", "stop"),
        ("filled", "fill"),
        ("passes", "pass"),
        ("stenosis", "stenosis"),  # -is, -us, -ss keep their s
        ("uterus", "uterus"),
        ("hamartomas", "hamartoma"),  # -as plurals are common in medicine
        ("dysplasias", "dysplasia"),
        ("pancreas", "pancrea"),
        ("CNS", "cns"),  # under 4 letters: never stemmed
        ("RBCs", "rbc"),
        ("T2s", "t2s"),  # not all letters: never stemmed
        ("renal", "rena"),  # -al after an a goes, but meets no noun
        ("fibular", "fibula"),  # an a-noun's adjective meets the noun
        ("tibial", "tibia"),
        ("vertebrae", "vertebra"),
        ("hypoplastic", "hypoplasia"),  # fixed derivational pairs
        ("Dysplastic", "dysplasia"),
        ("sclerotic", "sclerosis"),
        ("anemic", "anemia"),
        ("atrophic", "atrophy"),
        ("normality", "normality"),  # other derivations are not folded
        ("deficient", "deficient"),
        ("deficiency", "deficiency"),
        ("recurrence", "recurrenc"),
        ("SJÖGREN", "sjogren"),
        ("Sjo\u0308gren", "sjogren"),  # combining diaeresis: the same key as the precomposed
        ("ﬁbrosis", "fibrosis"),  # NFKC ligature
        ("Pre-auricular", "preauricula"),  # a bound prefix's hyphen goes (and -ar after an a)
        ("Sjögren's", "sjogren"),  # a possessive goes
    ],
)
def test_token_key_folds_case_accents_plural_and_inflection(word: str, key: str) -> None:
    assert token_key(word) == key


def test_an_adjective_finds_the_name_its_noun_is_written_in() -> None:
    detector = DictionaryDetector.from_names([("HP:1", "Fibular hypoplasia")])
    text = "Hypoplasia of the fibula and a hypoplastic fibula."
    assert [s.text for s in detector.detect(text)] == [
        "Hypoplasia of the fibula",
        "hypoplastic fibula",
    ]


def test_stop_words_are_judged_before_stemming_and_keep_meaningful_words() -> None:
    assert content_key("The") is None and content_key("of") is None
    assert {"and", "or", "no", "not", "without", "a"}.isdisjoint(STOP_WORDS)
    assert content_key("A") == "a"


def test_tokenize_gives_exact_offsets_on_hostile_text() -> None:
    text = "\U0001f600 Cafe\u0301\xa0kidney,\r\nX-linked pre-\nprep-x"
    tokens = tokenize(text)
    assert [t.text for t in tokens][7:] == ["pre", "-", "prep", "-", "x"]  # no prefix here
    assert [t.text for t in tokens][:7] == [
        "\U0001f600",
        "Cafe\u0301",
        "kidney",
        ",",
        "X",
        "-",
        "linked",
    ]
    assert [t.word for t in tokens][:7] == [False, True, True, False, True, False, True]
    assert all(text[t.start : t.end] == t.text for t in tokens)


# ---------------------------------------------------------------------- matching
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Kidneys: polycystic", [("Kidneys: polycystic", ("HP:2",))]),  # plural, order, colon
        ("Kidneys, polycystic", []),  # a list's comma ends a match
        ("POLYCYSTIC KIDNEY", [("POLYCYSTIC KIDNEY", ("HP:2",))]),  # case
        ("abnormalities of kidneys", [("abnormalities of kidneys", ("HP:5",))]),  # no "the"
        ("kidney abnormality", [("kidney abnormality", ("HP:5",))]),
        ("cardiomyopathy dilating", [("cardiomyopathy dilating", ("HP:7",))]),  # inflection
        ("Sjogren's syndrome", [("Sjogren's syndrome", ("HP:6",))]),  # accent, possessive 's'
        ("pre-auricular pits", [("pre-auricular pits", ("HP:14",))]),  # prefix hyphen
        ("nonprogressive ataxia", [("nonprogressive ataxia", ("HP:15",))]),
    ],
)
def test_variants_of_a_name_match(
    detector: DictionaryDetector, text: str, expected: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert found(detector, text) == expected


def test_longest_match_wins_over_the_names_inside_it(detector: DictionaryDetector) -> None:
    text = "a polycystic kidney disease case"
    assert found(detector, text) == [("polycystic kidney disease", ("HP:1",))]


def test_equal_length_overlaps_keep_the_earlier_start() -> None:
    detector = DictionaryDetector.from_names([("X:1", "alpha beta"), ("X:2", "beta gamma")])
    assert found(detector, "alpha beta gamma") == [("alpha beta", ("X:1",))]


def test_an_ambiguous_name_keeps_every_concept_sorted(detector: DictionaryDetector) -> None:
    assert found(detector, "kidney cysts") == [("kidney cysts", ("HP:13", "HP:3"))]


def test_and_barriers_and_unknown_words_stop_a_match(detector: DictionaryDetector) -> None:
    assert found(detector, "hand and foot") == []  # "and" is content, in no such name
    assert found(detector, "the kidney. Polycystic findings") == []  # a sentence end
    assert found(detector, "renal large cyst") == []  # only consecutive content tokens


def test_single_letters_count_inside_a_longer_name(detector: DictionaryDetector) -> None:
    assert found(detector, "vitamin A deficiency") == [("vitamin A deficiency", ("HP:9",))]
    assert found(detector, "vitamin deficiency") == [("vitamin deficiency", ("HP:10",))]


def test_short_and_stop_word_only_names_are_skipped_with_a_count(
    detector: DictionaryDetector,
) -> None:
    assert detector.compiled.skipped == {"short": 1, "no_content": 1}
    assert detector.compiled.card["counts"]["skipped_short"] == 1
    assert found(detector, "an ab of the heart") == []


@pytest.mark.parametrize(
    ("word", "key"),
    [("MI", "^MI"), ("WAS", "^WAS"), ("RB1", "^RB1"), ("S3", "^S3"), ("Mi", None),
     ("was", None), ("II", None), ("IV", None), ("ABCDEF", None), ("A", None), ("3", None)],
)  # fmt: skip
def test_acronym_keys_keep_case_and_leave_words_and_roman_numerals(
    word: str, key: str | None
) -> None:
    assert acronym_key(word) == key


def test_acronyms_match_only_in_capitals(detector: DictionaryDetector) -> None:
    assert found(detector, "history of MI.") == [("MI", ("HP:11",))]
    assert found(detector, "mi amigo") == []
    assert found(detector, "It was WAS.") == [("WAS", ("HP:17",))]
    assert found(detector, "all relapse") == []
    assert found(detector, "ALL relapses") == [("ALL relapses", ("HP:18",))]
    assert found(detector, "atrioventricular septal defects") == [
        ("atrioventricular septal defects", ("HP:19",))
    ]


def test_offsets_are_exact_on_hostile_text(detector: DictionaryDetector) -> None:
    text = (
        "Line one.\r\n\U0001f9ec\U0001f600 Sjo\u0308gren\xa0syndrome\r\nand polycystic\u00a0"
        "kidney\r\ndisease; Renal\u2003cysts."
    )
    spans = detector.detect(text)
    assert [(s.text, s.concept_ids) for s in spans] == [
        ("Sjo\u0308gren\xa0syndrome", ("HP:6",)),
        ("polycystic\xa0kidney\r\ndisease", ("HP:1",)),
        ("Renal\u2003cysts", ("HP:4",)),
    ]
    assert all(text[s.start : s.end] == s.text for s in spans)
    assert spans[0].start == text.index("Sjo")
    assert all(s.detector == "dictionary" for s in spans)


def test_the_detector_meets_the_protocol(detector: DictionaryDetector) -> None:
    as_protocol: Detector = detector
    assert as_protocol.name == "dictionary"
    spans = as_protocol.detect("renal cyst, kidney cyst")
    assert spans == sorted(spans) and all(isinstance(s, Span) for s in spans)


# ---------------------------------------------------------------------- sources
def _kg() -> KnowledgeGraph:
    concepts = [
        {"concept_id": "HP:1", "name": "Polycystic kidney disease"},
        {"concept_id": "HP:3", "name": "Renal cyst"},
    ]
    terms = [
        {"concept_id": "HP:1", "term": "Polycystic kidney disease"},
        {"concept_id": "HP:3", "term": "Renal cyst"},
        {"concept_id": "HP:3", "term": "Kidney cyst"},
    ]
    return KnowledgeGraph.from_records(concepts, terms)


def test_from_index_matches_the_terms_and_the_domain_synonyms() -> None:
    index = TermIndex.build(_kg(), KeyedEncoder(table={}), backend="exact", show_progress=False)
    detector = DictionaryDetector.from_index(index, synonyms=[("HP:3", "cystic kidney lesion")])
    text = "Cysts of the kidney and a cystic lesion of the kidney."
    assert found(detector, text) == [
        ("Cysts of the kidney", ("HP:3",)),
        ("cystic lesion of the kidney", ("HP:3",)),
    ]
    assert detector.compiled.card["counts"]["synonyms"] == 1


def test_from_kg_reads_names_and_terms() -> None:
    detector = DictionaryDetector.from_kg(_kg())
    assert found(detector, "kidneys: polycystic disease") == [
        ("kidneys: polycystic disease", ("HP:1",))
    ]


# ---------------------------------------------------------------------- cache
def test_the_cache_round_trips_and_a_second_build_reuses_it(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "Kidney cysts, polycystic kidney disease, and Sjögren syndrome."
    built = DictionaryDetector.from_names(NAMES, cache=tmp_path)
    (folder,) = tmp_path.iterdir()
    assert (
        json.loads((folder / "dictionary.json").read_text())["key_rules"]
        == dictionary_module.KEY_RULES
    )

    def no_build(pairs: object) -> None:  # the second build must not compile
        raise AssertionError("the cache was not used")

    monkeypatch.setattr(dictionary_module, "compile_names", no_build)
    again = DictionaryDetector.from_names(NAMES, cache=tmp_path)
    assert again.detect(text) == built.detect(text) != []
    assert again.compiled.entries == built.compiled.entries
    assert again.compiled.skipped == built.compiled.skipped
    with pytest.raises(AssertionError, match="cache was not used"):  # other synonyms: new key
        DictionaryDetector.from_names(NAMES, synonyms=[("HP:3", "cystic kidney")], cache=tmp_path)


def test_load_refuses_a_dictionary_of_other_key_rules(tmp_path) -> None:
    folder = DictionaryDetector.from_names(NAMES).save(tmp_path / "dict")
    card = json.loads((folder / "dictionary.json").read_text())
    card["key_rules"] = 0
    (folder / "dictionary.json").write_text(json.dumps(card))
    with pytest.raises(ArtifactMismatchError, match=r"key rules 0; .*delete the folder and build"):
        DictionaryDetector.load(folder)


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_load_names_a_missing_or_damaged_file(tmp_path, damage: str) -> None:
    folder = DictionaryDetector.from_names(NAMES).save(tmp_path / "dict")
    entries = folder / "entries.json"
    if damage == "missing":
        entries.unlink()
    else:
        entries.write_text(entries.read_text()[:20])
    with pytest.raises(ArtifactMismatchError, match=r"entries\.json is not a readable .*delete"):
        DictionaryDetector.load(folder)


def _brute_force(names: list[tuple[str, str]], text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """Every window of consecutive content tokens compared with every name, no pruning; then
    the longest (earlier start on ties) of overlapping windows kept."""
    by_keys: dict[tuple[str, ...], set[str]] = {}
    for cid, name in names:
        by_keys.setdefault(tuple(sorted(name_keys(name))), set()).add(cid)
    content = [
        (t.start, t.end, content_key(t.text) if t.word else None)
        for t in tokenize(text)
        # a comma blocks as a barrier does (no digits here: every comma is a list's)
        if (not t.word and t.text in {*BARRIERS, ","}) or (t.word and content_key(t.text))
    ]
    windows = []
    for i in range(len(content)):
        for j in range(i, len(content)):
            keys = [k for *_, k in content[i : j + 1]]
            if None in keys:
                break
            hit = by_keys.get(tuple(sorted(keys)))  # type: ignore[arg-type]
            if hit:
                windows.append((i, j, tuple(sorted(hit))))
    windows.sort(key=lambda w: (content[w[0]][0] - content[w[1]][1], content[w[0]][0]))
    kept: list[tuple[int, int, tuple[str, ...]]] = []
    for i, j, cids in windows:
        if all(j < a or b < i for a, b, _ in kept):
            kept.append((i, j, cids))
    return sorted((content[i][0], content[j][1], cids) for i, j, cids in kept)


def test_detect_equals_a_brute_force_search_on_random_texts() -> None:
    names = [
        (f"X:{i}", name)
        for i, name in enumerate(
            [
                "alpha beta",
                "beta gamma delta",
                "gamma",
                "delta of alpha",
                "alpha alpha beta",
                "epsilon zeta eta theta iota",
                "zeta",
                "beta and gamma",
            ]
        )
    ]
    detector = DictionaryDetector.from_names(names)
    words = [
        "alpha",
        "betas",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "of",
        "the",
        "and",
        "noise",
        ",",
        ".",
        "\r\n",
        "\xa0",
    ]
    rng = random.Random(7)
    for _ in range(300):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 25)))
        expected = _brute_force(names, text)
        assert [(s.start, s.end, s.concept_ids) for s in detector.detect(text)] == expected, text
