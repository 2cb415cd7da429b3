"""``AnnotateSpec`` and the detector registry: the spec's JSON round trip, a detector
registered in one line reaches ``termnorm annotate``, ``termnorm.annotate(...)`` and
``POST /v1/annotate`` with no other edit, an unknown detector is refused on every face listing
the known ones, and the service and the spaCy component honour the spec's assertion rules and
window size (``build_annotator`` is every face's)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import termnorm
from _cli import run_main
from _serve_fixtures import cached_tiny_index, serving
from termnorm.annotate.detectors import DETECTORS, DetectorSource
from termnorm.annotate.spans import Span
from termnorm.annotate.spec import AnnotateSpec
from termnorm.errors import UnknownNameError
from termnorm.search.spec import PipelineSpec

TEXT = "Patient lacks heart attack; history of asthma."
RULES = "literal\tcategory\tdirection\tmax_scope\nlacks\tNEGATED_EXISTENCE\tFORWARD\t\n"


class WordDetector:
    """Finds every ``asthma`` (a detector no face knows of)."""

    name = "asthma-finder"

    def detect(self, text: str) -> list[Span]:
        found = re.finditer("asthma", text)
        return [Span(m.start(), m.end(), m.group(), self.name) for m in found]


def word_detector(spec: AnnotateSpec, source: DetectorSource) -> WordDetector:
    return WordDetector()


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from cached_tiny_index("annotate_spec", tiny_bert_path, tmp_path_factory)


@pytest.fixture()
def dummy() -> Iterator[str]:
    DETECTORS.register("asthma-finder", word_detector, help="a test's detector")
    yield "asthma-finder"
    DETECTORS.unregister("asthma-finder")


def test_the_spec_round_trips_through_json_and_refuses_unknown_keys(tmp_path: Path) -> None:
    spec = AnnotateSpec(
        PipelineSpec(min_score=0.9, strategy="o-t"),
        detectors="both",
        ner=tmp_path,
        k=3,
        window_chars=200,
        rules=tmp_path / "rules.tsv",
        language="fr",
    )
    data = json.loads(json.dumps(spec.to_dict()))
    assert data["detectors"] == ["dictionary", "tagger"] and data["search"]["min_score"] == 0.9
    assert AnnotateSpec.from_dict(data) == spec
    with pytest.raises(
        ValueError,
        match=r"unknown option\(s\) windows for an annotate spec; known: coordination, detectors",
    ):
        AnnotateSpec.from_dict({"windows": 3})
    with pytest.raises(ValueError, match="--window-chars must be at least 2"):
        AnnotateSpec(window_chars=1)


def test_a_registered_detector_reaches_the_cli_the_api_and_the_service(
    dummy: str, index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wanted = [("asthma", "T:0004", dummy)]
    found = termnorm.annotate(TEXT, index=index_dir, detectors=[dummy], min_score=0.99)
    assert [(a.text, a.concept_id, a.detector) for a in found] == wanted

    out = tmp_path / "out.jsonl"
    args = ["annotate", TEXT, "--index", str(index_dir), "--min-score", "0.99"]
    code, _, err = run_main([*args, "--detectors", dummy, "--out", str(out)], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["text"], r["concept_id"], r["detector"]) for r in rows] == wanted

    with serving(index_dir) as client:
        body = {"documents": [{"id": "d", "text": TEXT}], "min_score": 0.99}
        answer = client.post("/v1/annotate", json={**body, "detectors": [dummy]})
        assert answer.status_code == 200, answer.text
        rows = answer.json()["results"][0]["annotations"]
        assert [(r["text"], r["concept_id"], r["detector"]) for r in rows] == wanted
        unknown = client.post("/v1/annotate", json={**body, "detectors": ["asthma-findr"]})
    assert unknown.status_code == 422, unknown.text  # the schema lists what the service runs
    assert "Input should be 'dictionary' or 'asthma-finder'" in unknown.text


def test_an_unknown_detector_lists_the_known_ones_on_every_face(
    index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = "unknown detector 'dictionry' (--detectors): did you mean 'dictionary'? Known: "
    with pytest.raises(UnknownNameError, match=re.escape(known + "dictionary, tagger")):
        termnorm.annotate(TEXT, index=index_dir, detectors="dictionry")
    code, _, err = run_main(["annotate", TEXT, "--detectors", "dictionry"], capsys)
    assert code == 2 and "Known: dictionary, tagger" in err
    code, _, err = run_main(["serve", "--detectors", "dictionry"], capsys)
    assert code == 2 and "Known: dictionary, tagger" in err
    spacy = pytest.importorskip("spacy")
    with pytest.raises(UnknownNameError, match="Known: dictionary, tagger"):
        spacy.blank("en").add_pipe("termnorm", config={"detectors": ["dictionry"]})


def test_the_service_and_spacy_honour_the_rules_and_the_window_size(
    index_dir: Path, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.tsv"
    rules.write_text(RULES, encoding="utf-8")
    spec = AnnotateSpec(rules=rules, window_chars=300)
    with serving(index_dir, annotate=spec, min_score=0.99) as client:
        body = {"documents": [{"id": "d", "text": TEXT}], "min_score": 0.99}
        answer = client.post("/v1/annotate", json=body)
        state = client.app.state.runtime.state  # type: ignore[attr-defined]
        made = state.annotator(state.settings.annotate)
    assert answer.status_code == 200, answer.text
    rows = answer.json()["results"][0]["annotations"]
    assert [(r["text"], r["negated"]) for r in rows] == [("heart attack", True), ("asthma", False)]
    assert made.max_chars == 300

    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    config = {"index": str(index_dir), "min_score": 0.99, "rules": str(rules), "window_chars": 300}
    pipe = nlp.add_pipe("termnorm", config=config)
    assert [(e.text, e._.termnorm_negated) for e in nlp(TEXT).ents] == [
        ("heart attack", True),
        ("asthma", False),
    ]
    assert pipe.annotator.max_chars == 300
    plain = spacy.blank("en")
    plain.add_pipe("termnorm", config={"index": str(index_dir), "min_score": 0.99})
    assert [e._.termnorm_negated for e in plain(TEXT).ents] == [False, False]
