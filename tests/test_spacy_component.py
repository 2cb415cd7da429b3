"""The spaCy component ``termnorm`` on ``spacy.blank("en")``: found through the entry point
pyproject declares (no import of termnorm), the library's annotations as entities with
their extensions, a config generated from the spec and checked, a ``to_disk``/``load``
round trip, spans that cannot be entities logged, not lost silently, and a document whose
abbreviations Ab3P could not read saying so on the ``Doc``."""

from __future__ import annotations

import importlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

spacy = pytest.importorskip("spacy")

from termnorm.annotate.annotation import Annotation  # noqa: E402
from termnorm.annotate.pipeline import DocumentAnnotations  # noqa: E402
from termnorm.errors import ArtifactMismatchError, MissingExtraError  # noqa: E402
from termnorm.search.spec import PipelineSpec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEXT = "Patient denies heart attack; history of asthma. Mother: sick headache."

SCRIPT = """
import json, sys
import spacy
nlp = spacy.blank("en")
nlp.add_pipe("termnorm", config=json.loads(sys.argv[1]))
imported_by_spacy = "termnorm.integrations.spacy_component" in sys.modules
doc = nlp(sys.argv[2])
nlp.to_disk(sys.argv[3])
reloaded = spacy.load(sys.argv[3])
again = reloaded(sys.argv[2])
def rows(doc):
    return [
        [e.start_char, e.end_char, e.text, e.label_, e.kb_id_,
         [e._.get("termnorm_" + f) for f in ("negated", "hypothetical", "historical", "family")],
         [list(c) for c in e._.termnorm_concepts]]
        for e in doc.ents
    ]
print(json.dumps({"imported_by_spacy": imported_by_spacy, "ents": rows(doc),
                  "reloaded": rows(again), "pipe": reloaded.pipe_names}))
"""


def _entry_point_folder(root: Path) -> Path:
    """A folder on which ``importlib.metadata`` finds a distribution declaring exactly the
    ``spacy_factories`` entry points of pyproject.toml (as an install of termnorm would)."""
    import tomllib  # Python 3.11+, as tests/test_layout.py

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    factories = declared["project"]["entry-points"]["spacy_factories"]
    info = root / "termnorm_spacy_test-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: termnorm-spacy-test\nVersion: 0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in factories.items())
    (info / "entry_points.txt").write_text(f"[spacy_factories]\n{lines}")
    return root


def test_add_pipe_by_name_sets_ents_and_extensions_and_round_trips(
    index_dir: Path, tmp_path: Path
) -> None:
    config = {"index": str(index_dir), "min_score": 0.99, "k": 3}
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(_entry_point_folder(tmp_path / "ep")), str(ROOT / "src")]
        ),
        "TERMNORM_CACHE": str(tmp_path / "cache"),
    }
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(config), TEXT, str(tmp_path / "nlp")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["imported_by_spacy"] is True  # the script never imports termnorm itself
    ents = out["ents"]
    assert [(e[2], e[3], e[4], e[5]) for e in ents] == [
        ("heart attack", "T:0001", "T:0001", [True, False, False, False]),
        ("asthma", "T:0004", "T:0004", [False, False, True, False]),
        ("sick headache", "T:0005", "T:0005", [False, False, False, True]),
    ]
    for start, end, text, *_ in ents:
        assert TEXT[start:end] == text
    assert all(1 <= len(e[6]) <= 3 and e[6][0][0] == e[4] for e in ents)  # ranked, top first
    assert out["reloaded"] == ents and out["pipe"] == ["termnorm"]  # config.cfg is the state


@pytest.fixture()
def component_module() -> object:
    return importlib.import_module("termnorm.integrations.spacy_component")


def test_the_config_is_the_pipeline_and_annotate_specs_plus_label(
    component_module: object, index_dir: Path
) -> None:
    from termnorm.annotate.spec import AnnotateSpec
    from termnorm.integrations.spacy_component import DEFAULT_CONFIG

    annotate = set(AnnotateSpec().to_dict()) - {"search"}
    assert set(DEFAULT_CONFIG) == set(PipelineSpec().to_dict()) | annotate | {"label"}
    nlp = spacy.blank("en")
    config = {"index": str(index_dir), "strategy": "o-t", "k": 2}
    pipe = nlp.add_pipe("termnorm", config=config)
    assert pipe.annotator.spec == PipelineSpec(index=index_dir, strategy="o-t")
    assert pipe.annotator.k == 2
    with pytest.raises(Exception, match="unexpected argument: 'min_scroe'"):
        spacy.blank("en").add_pipe("termnorm", config={"min_scroe": 0.5})
    with pytest.raises(ValueError, match="--mode must be term or concept"):
        spacy.blank("en").add_pipe("termnorm", config={"mode": "words"})


@pytest.mark.parametrize("made", [False, True])
def test_an_index_path_that_is_no_index_is_refused_by_add_pipe_in_one_line(
    component_module: object, tmp_path: Path, made: bool
) -> None:
    folder = tmp_path / "idx" / "hpo"
    if made:
        folder.mkdir(parents=True)  # a folder, but no index in it
    what = "has no index.json" if made else "does not exist"
    with pytest.raises(ArtifactMismatchError) as refused:
        spacy.blank("en").add_pipe("termnorm", config={"index": str(folder), "min_score": 0.8})
    assert str(refused.value) == (
        f"the termnorm component's index {folder} {what}: build it first (termnorm index "
        f"build --kg KG --out {folder}), or leave 'index' out of the config for the default index"
    )


class _Fixed:
    """An annotator that answers the given annotations (what the guard must cope with)."""

    def __init__(self, annotations: list[Annotation]) -> None:
        self.annotations = annotations

    def annotate_document(self, text: str, doc_id: str = "") -> DocumentAnnotations:
        return DocumentAnnotations(doc_id, self.annotations)


def _annotation(text: str, start: int, end: int, concept_id: str) -> Annotation:
    return Annotation("", start, end, text[start:end], concept_id, "name", 0.9, "dictionary")


def test_unaligned_and_overlapping_spans_are_logged_not_lost_silently(
    component_module: object, caplog: pytest.LogCaptureFixture
) -> None:
    text = "heartache pain. Fever"
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("termnorm", config={"label": "CONCEPT"})
    pipe.annotator = _Fixed(
        [
            _annotation(text, 0, 5, "T:1"),  # "heart" widens to the token "heartache"
            _annotation(text, 5, 14, "T:2"),  # "ache pain" widens to "heartache pain": overlap
            _annotation(text, 16, 21, "T:3"),
            Annotation("", 16, 40, "Fever...", "T:4", "n", 0.9, "dictionary"),  # past the end
        ]
    )
    with caplog.at_level(logging.WARNING, logger="termnorm.integrations.spacy_component"):
        doc = nlp(text)
    assert [(e.text, e.label_, e.kb_id_) for e in doc.ents] == [
        ("heartache", "CONCEPT", "T:1"),
        ("Fever", "CONCEPT", "T:3"),
    ]
    logged = caplog.text
    assert "'heartache pain' [0:14] (CONCEPT) left out: it overlaps" in logged
    assert "'Fever...' [16:40] (T:4) left out: no token of the doc covers it" in logged


def test_entities_of_an_earlier_component_are_kept(
    component_module: object, caplog: pytest.LogCaptureFixture
) -> None:
    text = "chest pain today"
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "SYMPTOM", "pattern": "pain"}])
    pipe = nlp.add_pipe("termnorm")
    pipe.annotator = _Fixed([_annotation(text, 0, 10, "T:9"), _annotation(text, 11, 16, "T:8")])
    with caplog.at_level(logging.WARNING, logger="termnorm.integrations.spacy_component"):
        doc = nlp(text)
    assert [(e.text, e.label_) for e in doc.ents] == [("pain", "SYMPTOM"), ("today", "T:8")]
    assert "'chest pain' [0:10] (T:9) left out: it overlaps" in caplog.text


CRASHING = ("heart attack (MI) and asthma (BA) " * 2703)[:100_000]
"""Ab3P segfaults on this text (tests/test_native_crash_faces.py): 100,000 characters, no
full stop, with names of the tiny KG."""


def test_a_doc_whose_abbreviations_cannot_be_read_carries_the_warning(
    component_module: object, index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyab3p")
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    nlp = spacy.blank("en")
    nlp.add_pipe("termnorm", config={"index": str(index_dir), "min_score": 0.99})
    crashed = nlp(CRASHING)
    assert crashed._.termnorm_warning.startswith("Ab3P crashed on this document (killed by SIG")
    assert "its short forms are not expanded" in crashed._.termnorm_warning
    assert {e.kb_id_ for e in crashed.ents} == {"T:0001", "T:0004"}  # still annotated
    fine = nlp("History of asthma (BA).")
    assert fine._.termnorm_warning is None
    assert [e.kb_id_ for e in fine.ents] == ["T:0004"]


def test_the_language_config_chooses_the_assertion_rules(
    component_module: object, index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    config = {"index": str(index_dir), "min_score": 0.99}
    detected = spacy.blank("fr")
    detected.add_pipe("termnorm", config=config)
    (ent,) = detected("Pas d'hypertension.").ents
    assert ent._.termnorm_negated and ent._.termnorm_annotation.assertion_language == "fr"
    declared = spacy.blank("fr")
    declared.add_pipe("termnorm", config={**config, "language": "en"})
    (ent,) = declared("Pas d'hypertension.").ents
    assert not ent._.termnorm_negated
    assert ent._.termnorm_annotation.assertion_language_source == "declared"


def test_without_spacy_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "termnorm.integrations.spacy_component"
    monkeypatch.delitem(sys.modules, name, raising=False)
    for module in ("spacy", "spacy.language", "spacy.tokens"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingExtraError, match=r"pip install 'termnorm\[spacy\]'"):
        importlib.import_module(name)
