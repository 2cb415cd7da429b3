"""``termnorm ner train`` then ``termnorm annotate --ner`` / ``eval annotate --ner``, the
``--detectors`` choices, and ``termnorm.annotate(text, ner=...)``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import termnorm
from _cli import run_main
from _tagger_fixtures import DOCUMENTS, gscplus_text, int8_or_skip
from termnorm.annotate.detectors import DetectorSource, build_annotator, tagger_of_spec
from termnorm.annotate.spec import AnnotateSpec
from termnorm.annotate.tagger import TaggerRuntime
from termnorm.encoders.runtime import Runtime
from termnorm.errors import UnknownNameError
from termnorm.search.spec import PipelineSpec

TINY_FLAGS = [
    "--epochs", "40", "--batch-size", "3", "--learning-rate", "0.02",
    "--head-learning-rate", "0.03", "--warmup", "0", "--max-length", "64",
    "--stride", "16", "--dropout", "0", "--dev-fraction", "0",
]  # fmt: skip
TEXT = DOCUMENTS[1].text  # "The migraine came back after the heart attack."


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ner_corpus") / "gold.tsv"
    path.write_text(gscplus_text(DOCUMENTS), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tagger_dir(
    corpus: Path, tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("ner_cli") / "tagger"
    args = ["ner", "train", "--mentions", str(corpus), "--model", str(tiny_bert_path)]
    from termnorm.cli.main import main  # module scope: no capsys, so main directly

    with pytest.raises(SystemExit) as done:
        main([*args, *TINY_FLAGS, "--out", str(out)])
    assert done.value.code in (0, None)
    return out


@pytest.fixture()
def base(index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    return ["--index", str(index_dir), "--min-score", "0.99"]


def _annotate(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> list[tuple[str, str, str]]:
    out = tmp_path / "out.jsonl"
    code, _, err = run_main(["annotate", TEXT, *args, "--out", str(out)], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return [(r["text"], r["concept_id"], r["detector"]) for r in rows]


def test_ner_train_writes_a_tagger_folder_with_its_card(tagger_dir: Path) -> None:
    card = json.loads((tagger_dir / "tagger.json").read_text())
    assert card["kind"] == "span-tagger" and card["epochs_run"] == 40
    assert card["training"]["learning_rate"] == 0.02 and card["max_length"] == 64


@pytest.mark.parametrize(
    ("choice", "detector"),
    [("tagger", "tagger"), ("both", "dictionary+tagger"), (None, "tagger")],
)
def test_annotate_with_the_tagger(
    tagger_dir: Path,
    base: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    choice: str | None,
    detector: str,
) -> None:
    chosen = ["--detectors", choice] if choice else []
    found = _annotate([*base, "--ner", str(tagger_dir), *chosen], tmp_path, capsys)
    assert found == [("migraine", "T:0005", detector), ("heart attack", "T:0001", detector)]


def test_annotate_without_ner_runs_the_dictionary(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = _annotate(base, tmp_path, capsys)
    assert {d for _, _, d in found} == {"dictionary"}


def test_a_tagger_choice_without_ner_is_refused(
    base: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(["annotate", TEXT, *base, "--detectors", "tagger"], capsys)
    assert code == 2 and "--ner DIR" in err


def test_ner_on_a_folder_that_is_no_tagger_is_refused(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(["annotate", TEXT, *base, "--ner", str(tmp_path)], capsys)
    assert code == 1 and "not a termnorm span tagger folder" in err


def test_eval_annotate_scores_the_tagger_spans(
    tagger_dir: Path, corpus: Path, base: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["eval", "annotate", str(corpus), *base, "--ner", str(tagger_dir), "--json"]
    code, out, err = run_main([*args, "--detectors", "tagger"], capsys)
    assert code == 0, err
    metrics = json.loads(out)
    assert metrics["span_tp"] == 4 and metrics["span_f1"] == 1.0
    assert metrics["detectors"] == "tagger" and metrics["ner"] == str(tagger_dir)


def test_the_tagger_runs_in_its_own_runtime_while_the_normalizer_keeps_the_search_s(
    tagger_dir: Path,
    index_dir: Path,
    base: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    int8_or_skip()
    search = PipelineSpec(index=index_dir, min_score=0.99)
    annotator = build_annotator(AnnotateSpec(search, ner=tagger_dir, ner_runtime="onnx-int8"))
    found = annotator.annotate(TEXT)
    (tagger,) = annotator.detectors
    assert tagger.int8 is not None  # the tagger's int8 graph
    assert annotator.matcher.identity()["recall"]["runtime"] == "torch"  # the search's: fp32
    assert [(a.text, a.concept_id) for a in found] == [
        ("migraine", "T:0005"),
        ("heart attack", "T:0001"),
    ]
    cli = _annotate(
        [*base, "--ner", str(tagger_dir), "--ner-runtime", "onnx-int8"], tmp_path, capsys
    )
    assert cli == [("migraine", "T:0005", "tagger"), ("heart attack", "T:0001", "tagger")]


def test_the_tagger_follows_the_search_runtime_unless_given_its_own(tagger_dir: Path) -> None:
    int8_or_skip()
    int8_search = PipelineSpec(runtime=Runtime.ONNX_INT8)
    follows = tagger_of_spec(AnnotateSpec(int8_search, ner=tagger_dir), DetectorSource())
    own = AnnotateSpec(int8_search, ner=tagger_dir, ner_runtime=TaggerRuntime.TORCH)
    assert follows.int8 is not None
    assert tagger_of_spec(own, DetectorSource()).int8 is None
    assert tagger_of_spec(AnnotateSpec(ner=tagger_dir), DetectorSource()).int8 is None


def test_a_tagger_runtime_that_is_none_of_its_choices_is_refused_naming_the_flag(
    base: list[str], tagger_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(
        ValueError, match=r"--ner-runtime: 'onnx' is not one of torch, bf16, onnx-int8"
    ):
        AnnotateSpec(ner=tagger_dir, ner_runtime="onnx")
    assert AnnotateSpec.from_dict({"ner_runtime": "bf16"}).ner_runtime is TaggerRuntime.BF16
    args = ["annotate", TEXT, *base, "--ner", str(tagger_dir), "--ner-runtime", "onnx"]
    code, _, err = run_main(args, capsys)
    assert code == 2 and "--ner-runtime" in err and "onnx-int8" in err


def test_python_annotate_takes_ner_and_a_choice(tagger_dir: Path, index_dir: Path) -> None:
    found = termnorm.annotate(
        TEXT, index=index_dir, ner=tagger_dir, detectors="tagger", min_score=0.99
    )
    assert [(a.text, a.detector) for a in found] == [
        ("migraine", "tagger"),
        ("heart attack", "tagger"),
    ]


def test_detector_choice_defaults_aliases_and_refusals(tmp_path: Path) -> None:
    assert AnnotateSpec().detectors == ("dictionary",)
    assert AnnotateSpec(ner=tmp_path).detectors == ("tagger",)
    assert AnnotateSpec(detectors="tagger", ner=tmp_path).detectors == ("tagger",)
    assert AnnotateSpec(detectors="both", ner=tmp_path).detectors == ("dictionary", "tagger")
    assert AnnotateSpec(detectors=["tagger,dictionary"], ner=tmp_path).detectors == (
        "tagger",
        "dictionary",
    )
    with pytest.raises(ValueError, match="needs a trained span tagger"):
        AnnotateSpec(detectors="both")
    with pytest.raises(
        UnknownNameError,
        match=r"unknown detector 'ner' \(--detectors\)\. Known: dictionary, tagger",
    ):
        AnnotateSpec(detectors="ner", ner=tmp_path)


def test_the_service_and_spacy_run_the_tagger(
    tagger_dir: Path, index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("fastapi")
    from _serve_fixtures import serving

    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    wanted = [("migraine", "T:0005", "tagger"), ("heart attack", "T:0001", "tagger")]
    with serving(index_dir, annotate=AnnotateSpec(ner=tagger_dir), min_score=0.99) as client:
        body = {"documents": [{"id": "d", "text": TEXT}]}
        answer = client.post("/v1/annotate", json=body)
        both = client.post("/v1/annotate", json={**body, "detectors": ["both"]})
    assert answer.status_code == 200, answer.text
    rows = answer.json()["results"][0]["annotations"]
    assert [(r["text"], r["concept_id"], r["detector"]) for r in rows] == wanted
    assert {r["detector"] for r in both.json()["results"][0]["annotations"]} == {
        "dictionary+tagger"
    }

    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    config = {"index": str(index_dir), "min_score": 0.99, "ner": str(tagger_dir)}
    nlp.add_pipe("termnorm", config=config)
    ents = nlp(TEXT).ents
    assert [(e.text, e.kb_id_, e._.termnorm_annotation.detector) for e in ents] == wanted
