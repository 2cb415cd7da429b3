"""benchmarks/phenobert_crossfit.py: document folds, and every mention scored by its fold's run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "phenobert_crossfit.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("phenobert_crossfit", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _val(tmp_path: Path, docs: list[str]) -> Path:
    ann = tmp_path / "val" / "ann"
    ann.mkdir(parents=True)
    for doc in docs:
        (ann / doc).write_text(f"0\t5\tshort\tHP:{doc}\n")
    return ann


def test_split_holds_each_document_out_exactly_once(tmp_path: Path) -> None:
    script = _script()
    ann = _val(tmp_path, ["30", "10", "50", "20", "40"])
    folds = script.split(ann, tmp_path / "folds", 2)
    assert folds == [["10", "30", "50"], ["20", "40"]]
    for i, held_out in enumerate(folds):
        train = {p.name for p in (tmp_path / "folds" / f"phenobert_train_{i}" / "ann").iterdir()}
        assert train == {"10", "20", "30", "40", "50"} - set(held_out)
    saved = json.loads((tmp_path / "folds" / "phenobert_folds.json").read_text())
    assert saved == folds
    # splitting again replaces the links instead of failing on them
    assert script.split(ann, tmp_path / "folds", 2) == folds


def test_split_refuses_one_fold_and_too_few_documents(tmp_path: Path) -> None:
    script = _script()
    ann = _val(tmp_path, ["1", "2"])
    with pytest.raises(SystemExit, match="at least 2"):
        script.split(ann, tmp_path / "folds", 1)
    with pytest.raises(SystemExit, match="cannot fill 3 folds"):
        script.split(ann, tmp_path / "folds", 3)


def _records(run: str, docs: list[str]) -> list[dict]:
    return [{"location": f"ann/{d}:1", "text": "t", "doc_id": d, "run": run} for d in docs]


def test_merge_takes_each_mention_from_the_run_that_did_not_see_it() -> None:
    script = _script()
    folds = [["a", "c"], ["b"]]
    docs = ["a", "b", "c", "b"]
    merged = script.merge_records(folds, [_records("r0", docs), _records("r1", docs)])
    assert [r["run"] for r in merged] == ["r0", "r1", "r0", "r1"]
    assert [r["doc_id"] for r in merged] == docs


def test_merge_refuses_misaligned_runs() -> None:
    script = _script()
    folds = [["a"], ["b"]]
    with pytest.raises(SystemExit, match="one run per fold"):
        script.merge_records(folds, [_records("r0", ["a", "b"])])
    with pytest.raises(SystemExit, match="different mention sets"):
        script.merge_records(folds, [_records("r0", ["a", "b"]), _records("r1", ["a"])])
    with pytest.raises(SystemExit, match="different orders"):
        script.merge_records(folds, [_records("r0", ["a", "b"]), _records("r1", ["b", "a"])])
    with pytest.raises(SystemExit, match="in no fold"):
        script.merge_records(folds, [_records("r0", ["z"]), _records("r1", ["z"])])


def test_merge_reads_and_writes_prediction_files(tmp_path: Path, monkeypatch, capsys) -> None:
    from _eval_fakes import prediction_row
    from termnorm.evaluation.predictions import read_records, write_records

    script = _script()
    monkeypatch.setattr(script, "RUNS", tmp_path)
    monkeypatch.setattr(script, "FOLDS", tmp_path / "folds")
    (tmp_path / "folds").mkdir()
    (tmp_path / "folds" / "phenobert_folds.json").write_text(json.dumps([["a"], ["b"]]))
    for run, rank in (("r0", 1), ("r1", None)):
        rows = [{**prediction_row(i, rank), "doc_id": doc} for i, doc in enumerate("ab")]
        write_records(tmp_path / "predictions" / f"{run}__phenobert.jsonl", rows)
    script.merge("crossfit", ["r0", "r1"])
    merged = read_records(tmp_path / "predictions" / "crossfit__phenobert.jsonl")
    assert [(r["doc_id"], r["rank"]) for r in merged] == [("a", 1), ("b", None)]
    assert "2 mentions, acc@1 50.0" in capsys.readouterr().out
    with pytest.raises(SystemExit, match=r"r9__phenobert\.jsonl missing"):
        script.merge("again", ["r0", "r9"])
