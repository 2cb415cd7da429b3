"""``termnorm index build|info`` and ``termnorm normalize`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_tiny_kg
from termnorm.cli.main import main
from termnorm.kg import KnowledgeGraph
from termnorm.search.build import clear_caches


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``termnorm ARGV``."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 1), out.out, out.err


@pytest.fixture(autouse=True)
def fresh_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_caches()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))


@pytest.fixture()
def index_dir(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Path:
    out = tmp_path / "idx"
    code, stdout, _ = run(
        [
            "index",
            "build",
            "--kg",
            str(tiny_kg_dir),
            "--model",
            str(tiny_bert_path),
            "--out",
            str(out),
            "--backend",
            "exact",
            "--memory-budget",
            "1GB",
        ],
        capsys,
    )
    assert code == 0 and "model fingerprint" in stdout
    return out


@pytest.mark.parametrize("command", [["index", "build"], ["index", "info"], ["normalize"]])
def test_help_has_examples(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([*command, "--help"], capsys)
    assert code == 0 and "Examples" in out and "termnorm " + " ".join(command) in out


def test_index_info(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["index", "info", str(index_dir), "--json"], capsys)
    card = json.loads(out)
    assert code == 0 and card["counts"]["terms"] == 34
    assert card["backend"]["terms"]["backend"] == "exact"
    code, out, _ = run(["index", "info", str(index_dir)], capsys)
    assert code == 0 and "34 (exact)" in out


def test_normalize_terms_json(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["normalize", "heart attack", "MI", "--index", str(index_dir), "-k", "3", "--json"],
        capsys,
    )
    payload = json.loads(out)
    assert code == 0 and [p["query"] for p in payload] == ["heart attack", "MI"]
    first = payload[0]["candidates"]
    assert [c["rank"] for c in first] == [1, 2, 3]
    assert set(first[0]) == {
        "concept_id",
        "name",
        "score",
        "matched_term",
        "rank",
        "source",
        "term_source",
        "is_preferred",
        "semantic_types",
        "expanded_from",
        "recall_score",
        "ranker_score",
        "expansion",
        "expansion_source",
    }
    assert first[0]["source"] == "ontology" and first[0]["term_source"] == "tiny"


def test_normalize_terms_table(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["normalize", "asthma", "--index", str(index_dir), "-k", "2"], capsys)
    assert code == 0 and "asthma" in out and "matched term" in out and "T:" in out


def test_normalize_file(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text('{"mention": "heart attack"}\n{"mention": ""}\n')
    code, out, _ = run(
        [
            "normalize",
            "--index",
            str(index_dir),
            "--input",
            str(src),
            "--output",
            str(dst),
            "--column",
            "mention",
            "--json",
        ],
        capsys,
    )
    assert code == 0 and json.loads(out)["rows"] == 2 and json.loads(out)["errors"] == 1
    rows = [json.loads(line) for line in dst.read_text().splitlines()]
    assert rows[0]["concept_id"] and rows[1]["error"].startswith("empty input")


def test_normalize_min_score_and_filters(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["normalize", "asthma", "--index", str(index_dir), "-k", "3", "--json"]
    code, out, _ = run([*base, "--type", "lung", "--namespace", "T"], capsys)
    assert code == 0
    assert {c["semantic_types"][0] for c in json.loads(out)[0]["candidates"]} == {"lung"}
    code, out, _ = run([*base, "--not-type", "lung"], capsys)
    assert code == 0
    assert "lung" not in {c["semantic_types"][0] for c in json.loads(out)[0]["candidates"]}
    # scores are cosines (at most 1): only an identical vector reaches --min-score 1
    unknown = ["normalize", "qzx", *base[2:]]
    code, out, _ = run([*unknown, "--min-score", "1"], capsys)
    assert code == 0 and json.loads(out) == [
        {"query": "qzx", "candidates": [], "abstained": "no concept scored >= 1"}
    ]
    code, out, _ = run([*unknown[:4], "--min-score", "1"], capsys)
    assert code == 0 and "no concept scored >= 1" in out
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text("term\nqzx\n\n")
    code, out, _ = run(
        [
            "normalize",
            "--index",
            str(index_dir),
            "--input",
            str(src),
            "--output",
            str(dst),
            "--min-score",
            "1",
        ],
        capsys,
    )
    assert code == 0 and "(1 with errors, 1 abstained)" in out
    assert "from column 'term'" in out
    for bad, message in ((tmp_path, "is a folder"), (src, "is the input file")):
        code, _, err = run(
            [
                "normalize",
                "--index",
                str(tmp_path / "none"),
                "--input",
                str(src),
                "--output",
                str(bad),
            ],
            capsys,
        )
        assert code == 1 and message in err  # refused before the (missing) index is read


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["normalize", "MI", "--namespace", "HP"], "unknown namespace 'HP': the index has 'T'"),
        (["normalize", "MI", "--type", "Disease"], "unknown semantic type 'Disease'"),
        (["normalize", "  "], "whitespace-only input"),
        (["normalize", "x" * 20, "--max-chars", "10"], "input too long"),
        (["normalize", "MI", "--index", "{tmp}"], "not a termnorm index folder"),
        (["normalize", "MI", "--mode", "fuzzy"], "--mode must be term or concept"),
        (["normalize"], "give TERM arguments"),
        (["normalize", "--input", "a.csv"], "--input needs --output"),
        (["normalize", "--input", "nope.csv", "--output", "o.csv"], "no such file"),
    ],
)
def test_errors_are_one_line_and_non_zero(
    argv: list[str],
    message: str,
    index_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if "--index" not in argv:
        argv += ["--index", str(index_dir)]
    code, _, err = run(argv, capsys)
    assert code != 0 and message in err


def test_index_build_refuses_a_bad_pooling(
    tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        ["index", "build", "--kg", str(tiny_kg_dir), "--pooling", "sum", "--out", str(tmp_path)],
        capsys,
    )
    assert code != 0 and "'sum' is not one of" in err and "weightedmean" in err


def test_normalize_without_index_builds_the_default_once(
    monkeypatch: pytest.MonkeyPatch, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from termnorm.index import default

    built: list[int] = []

    def tiny_default_kg() -> KnowledgeGraph:
        built.append(1)
        return make_tiny_kg()

    monkeypatch.setattr(default, "default_kg", tiny_default_kg)
    monkeypatch.setattr(default, "default_model_path", lambda: tiny_bert_path)
    code, out, err = run(["normalize", "heart attack", "--json"], capsys)
    assert code == 0 and len(json.loads(out)[0]["candidates"]) == 5
    assert "building the default index" in err
    code, _, err = run(["normalize", "heart attack", "--json"], capsys)
    assert code == 0 and "building" not in err and built == [1]


def test_relative_model_path_works_from_another_folder_and_a_moved_model_needs_model(
    tiny_kg_dir: Path,
    tiny_bert_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import shutil

    build_cwd = tmp_path / "project"
    shutil.copytree(tiny_bert_path, build_cwd / "model")
    monkeypatch.chdir(build_cwd)
    code, _, err = run(
        [
            "index",
            "build",
            "--kg",
            str(tiny_kg_dir),
            "--model",
            "model",
            "--out",
            str(tmp_path / "idx"),
            "--backend",
            "exact",
        ],
        capsys,
    )
    assert code == 0, err
    card = json.loads((tmp_path / "idx" / "index.json").read_text())
    assert card["model"]["path"] == str((build_cwd / "model").resolve())

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    clear_caches()
    code, out, err = run(["normalize", "fever", "--index", str(tmp_path / "idx"), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)

    (build_cwd / "model").rename(tmp_path / "moved")  # the model moves away
    clear_caches()
    code, _, err = run(["normalize", "fever", "--index", str(tmp_path / "idx")], capsys)
    assert code != 0
    assert "--model" in err and "not there any more" in err
    code, out, err = run(
        [
            "normalize",
            "fever",
            "--index",
            str(tmp_path / "idx"),
            "--model",
            str(tmp_path / "moved"),
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out)
