"""Issue 43's "same annotations on every face": ``termnorm annotate`` (the CLI), the library
(``termnorm.annotate``), the spaCy component and ``POST /v1/annotate`` give one text the same
``(start, end, concept_id, flags)``, on a text with CRLF and an emoji (code-point offsets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import run_main

TEXT = (
    "Patient denies heart attack; history of asthma.\r\n"
    "Mother: sick headache \U0001fac0. Ruled out diabetes mellitus."
)
FLAGS = ("negated", "hypothetical", "historical", "family")
EXPECTED = [
    (15, 27, "T:0001", (True, False, False, False)),  # heart attack, negated
    (40, 46, "T:0004", (False, False, True, False)),  # asthma, historical
    (57, 70, "T:0005", (False, False, False, True)),  # sick headache, family
    (84, 101, "T:0003", (True, False, False, False)),  # diabetes mellitus, ruled out
]
Row = tuple[int, int, str, tuple[bool, ...]]


def _row(values: dict[str, object]) -> Row:
    flags = tuple(bool(values[f]) for f in FLAGS)
    return int(str(values["start"])), int(str(values["end"])), str(values["concept_id"]), flags


def _cli(index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[Row]:
    source = tmp_path / "note.txt"
    source.write_bytes(TEXT.encode("utf-8"))  # CRLF kept as written
    out = tmp_path / "out.jsonl"
    code, _, err = run_main(
        ["annotate", str(source), "--index", str(index), "--min-score", "0.99", "--out", str(out)],
        capsys,
    )
    assert code == 0, err
    return [_row(json.loads(line)) for line in out.read_text(encoding="utf-8").splitlines()]


def _library(index: Path) -> list[Row]:
    import termnorm

    found = termnorm.annotate(TEXT, index=index, min_score=0.99)
    return [_row(a.to_dict()) for a in found]


def _spacy(index: Path) -> list[Row]:
    spacy = pytest.importorskip("spacy")
    import termnorm.integrations.spacy_component  # noqa: F401  # registers it (entry point in a wheel)

    nlp = spacy.blank("en")
    nlp.add_pipe("termnorm", config={"index": str(index), "min_score": 0.99})
    return [
        (e.start_char, e.end_char, e.kb_id_, tuple(e._.get(f"termnorm_{f}") for f in FLAGS))
        for e in nlp(TEXT).ents
    ]


def _service(index: Path) -> list[Row]:
    pytest.importorskip("fastapi")
    from _serve_fixtures import serving

    with serving(index, min_score=0.99) as client:
        answer = client.post("/v1/annotate", json={"documents": [{"id": "n", "text": TEXT}]})
    assert answer.status_code == 200, answer.text
    (result,) = answer.json()["results"]
    assert result["error"] is None
    return [_row(a) for a in result["annotations"]]


def test_every_face_gives_the_same_annotations(
    index_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    faces = {
        "cli": _cli(index_dir, tmp_path, capsys),
        "library": _library(index_dir),
        "spacy": _spacy(index_dir),
        "service": _service(index_dir),
    }
    assert faces == {face: EXPECTED for face in faces}
    mentions = [TEXT[start:end] for start, end, _, _ in EXPECTED]  # code points: after the emoji
    assert mentions == ["heart attack", "asthma", "sick headache", "diabetes mellitus"]
