"""``termnorm ner train --kg``: a span tagger from a KG's names and unlabeled texts (the
dictionary's matches as gold, the names put into the texts' contexts), no annotated corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from _cli import run_main
from _tagger_fixtures import DOCUMENTS, gscplus_text
from termnorm.errors import EmptyResultError
from termnorm.training.tagger_data import TaggedDocument, distant_documents, replaced_copies

TINY_FLAGS = [
    "--epochs", "40", "--batch-size", "3", "--learning-rate", "0.02",
    "--head-learning-rate", "0.03", "--warmup", "0", "--max-length", "64",
    "--stride", "16", "--dropout", "0", "--dev-fraction", "0",
]  # fmt: skip
NAMES = ["asthma", "heart attack"]


def _label(text: str) -> list[tuple[int, int]]:
    """Every occurrence of a name of :data:`NAMES`."""
    spans = []
    for name in NAMES:
        at = text.find(name)
        while at >= 0:
            spans.append((at, at + len(name)))
            at = text.find(name, at + 1)
    return sorted(spans)


def test_distant_documents_take_the_labellers_spans_and_keep_texts_without_any() -> None:
    texts = {"a": "asthma and a heart attack", "b": "nothing here"}
    docs = distant_documents(texts, _label)
    assert docs == [
        TaggedDocument("a", texts["a"], ((0, 6), (13, 25))),
        TaggedDocument("b", texts["b"], ()),
    ]


def test_texts_where_the_labeller_finds_nothing_are_refused() -> None:
    with pytest.raises(EmptyResultError, match=r"occur in none of the 2 texts: give texts"):
        distant_documents({"a": "x", "b": "y"}, _label)


def test_replaced_copies_put_the_names_where_the_spans_were() -> None:
    docs = [
        TaggedDocument("a", "Asthma, then asthma again.", ((0, 6), (13, 19))),
        TaggedDocument("b", "no span", ()),
    ]
    names = ["Short stature", "ALS", "Short stature", " "]  # duplicates and blanks drop
    copies = replaced_copies(docs, names, copies=2, seed=0)
    assert [c.doc_id for c in copies] == ["a#1", "a#2"]  # "b" has no span to replace
    inserted = [[c.text[s:e] for s, e in c.spans] for c in copies]
    assert sorted(inserted[0]) == ["ALS", "short stature"]  # each name once per cycle
    assert inserted[1] == inserted[0]  # the shuffle is cycled
    first = copies[0]
    assert first.text == f"{inserted[0][0]}, then {inserted[0][1]} again."
    assert replaced_copies(docs, names, copies=2, seed=0) == copies  # seeded


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kg_texts") / "texts.tsv"
    path.write_text(gscplus_text(DOCUMENTS), encoding="utf-8")
    return path


def test_ner_train_from_a_kg_finds_its_names_in_a_sentence(
    texts: Path,
    tiny_kg_dir: Path,
    tiny_bert_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from termnorm.annotate.tagger import SpanTagger

    out = tmp_path / "tagger"
    args = ["ner", "train", "--kg", str(tiny_kg_dir), "--text", str(texts)]
    args += ["--model", str(tiny_bert_path), "--not-type", "lung", "--kg-copies", "1"]
    code, _, err = run_main([*args, *TINY_FLAGS, "--out", str(out)], capsys)
    assert code == 0, err
    card = json.loads((out / "tagger.json").read_text(encoding="utf-8"))
    # "asthma" is a lung concept, left out: its text teaches O; 2 texts with names, 1 copy each
    assert card["documents"]["train"] == 3 + 2
    assert card["corpora"][-1]["role"] == "names" and card["corpora"][-1]["names"] == 25
    tagger = SpanTagger.load(out)
    found = tagger.detect("The migraine came back after the heart attack.")
    assert [span.text for span in found] == ["migraine", "heart attack"]
    assert [span.text for span in tagger.detect("Patients with asthma were treated.")] == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], r"give either --mentions .* or --kg with --text"),
        (["--kg", "KG"], r"--kg labels the documents of --text"),
        (["--kg", "KG", "--text", "T", "--mentions", "M"], r"give either --mentions"),
        (["--mentions", "M", "--text", "T"], r"--text goes with --kg"),
        (["--kg", "KG", "--text", "T", "--dev", "D"], r"with --kg, --dev-fraction of --text"),
    ],
)
def test_the_sources_of_a_tagger_are_one_or_the_other(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(["ner", "train", *extra, "--out", str(tmp_path / "t")], capsys)
    assert code == 2
    assert re.search(message, " ".join(err.replace("│", " ").split()))


def test_an_unknown_type_to_leave_out_lists_the_kgs_types(
    texts: Path, tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["ner", "train", "--kg", str(tiny_kg_dir), "--text", str(texts)]
    code, _, err = run_main([*args, "--not-type", "Disease", "--out", str(tmp_path / "t")], capsys)
    assert code == 2
    assert "the KG's types are ['cardio', 'lung', 'other']" in " ".join(
        err.replace("│", " ").split()
    )
