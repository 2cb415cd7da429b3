"""One rule for every command that writes a folder (:func:`termnorm._artifacts.prepare_output`):
never into one of its inputs (even with --overwrite), never over a non-empty folder without
--overwrite, and with --overwrite the folder is replaced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _cli import run_main
from _kge_fixtures import save_cluster_kg
from conftest import make_tiny_kg
from termnorm._artifacts import prepare_output
from termnorm.errors import ArtifactMismatchError

HP_OBO = Path(__file__).parent / "fixtures" / "kg" / "hpo" / "hp.obo"


def _kg(folder: Path) -> Path:
    return make_tiny_kg().save(folder, card={"sources": [{"format": "fixture"}]})


def _busy(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("keep me")
    return folder


def _fingerprint(kg_dir: Path) -> str:
    return str(json.loads((kg_dir / "kg.json").read_text())["fingerprint"])


def test_prepare_output_refuses_an_input_it_is_holds_or_lies_inside(tmp_path: Path) -> None:
    kg = _kg(tmp_path / "kg")
    for out, relation in ((kg, "is"), (tmp_path, "holds"), (kg / "sub", "is inside")):
        with pytest.raises(ArtifactMismatchError, match=f"{relation} the --kg input"):
            prepare_output(out, overwrite=True, inputs={"--kg": kg})
    mentions = tmp_path / "m.tsv"
    mentions.write_text("x")
    with pytest.raises(ArtifactMismatchError, match="holds the --mentions input"):
        prepare_output(tmp_path, True, {"--mentions": [tmp_path / "absent", mentions]})
    assert prepare_output(tmp_path / "new", inputs={"--kg": kg, "--model": None})


def test_prepare_output_refuses_a_busy_folder_without_overwrite(tmp_path: Path) -> None:
    busy = _busy(tmp_path / "out")
    with pytest.raises(ArtifactMismatchError, match=r"pass --overwrite to replace it.*another"):
        prepare_output(busy)
    assert prepare_output(busy, overwrite=True) == busy


def test_kg_build_refuses_an_out_that_holds_its_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    obo = data / "hp.obo"
    obo.write_bytes(HP_OBO.read_bytes())
    args = ["kg", "build", "--add", f"obo:{obo}", "--out", str(data), "--overwrite"]
    code, _, err = run_main(args, capsys)
    assert code == 1 and "holds the source input" in err
    assert obo.read_bytes() == HP_OBO.read_bytes()


def test_kg_split_guards_its_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kg = _kg(tmp_path / "kg")
    before = _fingerprint(kg)
    code, _, err = run_main(["kg", "split", str(kg), "--out", str(kg), "--overwrite"], capsys)
    assert code == 1 and "is the KG_DIR input" in err and _fingerprint(kg) == before
    busy = _busy(tmp_path / "busy")
    code, _, err = run_main(["kg", "split", str(kg), "--out", str(busy)], capsys)
    assert code == 1 and "--overwrite" in err and (busy / "notes.txt").exists()
    code, _, err = run_main(["kg", "split", str(kg), "--out", str(busy), "--overwrite"], capsys)
    assert code == 0, err
    assert (busy / "kg.json").is_file() and not (busy / "notes.txt").exists()


def test_index_build_never_replaces_its_kg(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kg = _kg(tmp_path / "kg")
    before = _fingerprint(kg)
    args = ["index", "build", "--kg", str(kg), "--model", str(tiny_bert_path)]
    code, _, err = run_main([*args, "--out", str(kg), "--overwrite"], capsys)
    assert code == 1 and "is the --kg input" in err and _fingerprint(kg) == before
    code, _, err = run_main([*args, "--out", str(tiny_bert_path / "idx")], capsys)
    assert code == 1 and "is inside the --model input" in err
    out = tmp_path / "idx"
    assert run_main([*args, "--out", str(out)], capsys)[0] == 0
    code, _, err = run_main([*args, "--out", str(out)], capsys)
    assert code == 1 and "already exists and is not empty; pass --overwrite" in err
    assert run_main([*args, "--out", str(out), "--overwrite"], capsys)[0] == 0
    assert (out / "index.json").is_file()


def test_kge_train_guards_its_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pykeen")
    kg = save_cluster_kg(tmp_path / "kg")
    before = _fingerprint(kg)
    args = ["kge", "train", "--kg", str(kg), "--model", "transe", "--dim", "4", "--epochs", "1"]
    args += ["--no-mcsm"]
    code, _, err = run_main([*args, "--out", str(kg), "--overwrite"], capsys)
    assert code == 1 and "is the --kg input" in err
    assert _fingerprint(kg) == before and (kg / "concepts.parquet").is_file()
    busy = _busy(tmp_path / "kge")
    code, _, err = run_main([*args, "--out", str(busy)], capsys)
    assert code == 1 and "--overwrite" in err and (busy / "notes.txt").exists()
    code, _, err = run_main([*args, "--out", str(busy), "--overwrite"], capsys)
    assert code == 0, err
    assert (busy / "kge.json").is_file() and not (busy / "notes.txt").exists()


def test_rank_train_guards_its_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import termnorm.search.stages.ranker.training as training

    calls: list[Path] = []

    def fake_train(spec: Any, out: Path, show_progress: bool = False) -> Path:
        calls.append(Path(out))
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "ranker.json").write_text(json.dumps({"kind": "kar", "k_c": 1}))
        raise SystemExit(0)  # the guard passed: that is all this test needs

    monkeypatch.setattr(training, "train_ranker", fake_train)
    index = _busy(tmp_path / "idx")
    mentions = tmp_path / "train.tsv"
    mentions.write_text("HP:1\tseizure\n")
    args = ["rank", "train", "--index", str(index), "--mentions", str(mentions)]
    code, _, err = run_main([*args, "--out", str(index), "--overwrite"], capsys)
    assert code == 1 and "is the --index input" in err
    ranker = _busy(tmp_path / "ranker")
    code, _, err = run_main([*args, "--out", str(ranker)], capsys)
    assert code == 1 and "already exists and is not empty; pass --overwrite" in err
    assert not calls
    code, _, _ = run_main([*args, "--out", str(ranker), "--overwrite"], capsys)
    assert code == 0 and calls == [ranker]


def test_train_and_extend_vocab_never_write_into_an_input(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kg = _kg(tmp_path / "kg")
    before = _fingerprint(kg)
    code, _, err = run_main(["train", "--kg", str(kg), "--out", str(kg), "--overwrite"], capsys)
    assert code == 1 and "is the --kg input" in err and _fingerprint(kg) == before
    args = ["encoder", "extend-vocab", "--kg", str(kg), "--lang", "en", "--overwrite"]
    code, _, err = run_main(
        [*args, "--model", str(tiny_bert_path), "--out", str(tiny_bert_path)], capsys
    )
    assert code == 1 and "is the --model input" in err
    assert (tiny_bert_path / "config.json").is_file()
