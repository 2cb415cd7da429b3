"""Several domain synonym files: every one is used, in the CLI, the API and the service.

``--synonyms A --synonyms B`` once kept only B. Here file A alone maps the invented text
"zzqx blorp" to T:0003 and file B maps another text to T:0005: with the D-T strategy (the
domain synonyms only) the text is found at T:0003 only if A was read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import run_main
from _serve_fixtures import build_tiny_index, serving
from termnorm import api
from termnorm.mentions.synonyms import as_sources
from termnorm.search.build import clear_caches

ONLY_IN_FIRST = "zzqx blorp"


@pytest.fixture(autouse=True)
def fresh_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_caches()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))


@pytest.fixture()
def setup(tmp_path: Path, tiny_bert_path: Path) -> tuple[Path, Path, Path]:
    """The tiny index and two synonym files (concept_id<TAB>text)."""
    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    first.write_text(f"T:0003\t{ONLY_IN_FIRST}\n")
    second.write_text("T:0005\tqwv frandle\n")
    return build_tiny_index(tmp_path, tiny_bert_path), first, second


def test_normalize_cli_uses_every_synonyms_file(
    setup: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    index, first, second = setup
    args = ["normalize", ONLY_IN_FIRST, "--index", str(index), "--strategy", "d-t", "--json"]
    code, out, err = run_main([*args, "--synonyms", str(first), "--synonyms", str(second)], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["candidates"][0]["concept_id"] == "T:0003"
    assert f"domain synonyms from {first}: 1 added" in err
    assert f"domain synonyms from {second}: 1 added" in err


def test_eval_normalize_cli_uses_every_synonyms_file(
    setup: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index, first, second = setup
    mentions = tmp_path / "dev.tsv"
    mentions.write_text(f"T:0003\t{ONLY_IN_FIRST}\n")
    args = ["eval", "normalize", str(mentions), "--format", "tsv", "--index", str(index)]
    args += ["--strategy", "d-t", "--json", "--synonyms", str(first), "--synonyms", str(second)]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    assert json.loads(out)["acc@1"] == 1.0


def test_api_normalize_takes_a_path_or_a_list(setup: tuple[Path, Path, Path]) -> None:
    index, first, second = setup
    both = api.normalize(ONLY_IN_FIRST, index=index, synonyms=[first, str(second)], strategy="d-t")
    assert both[0].concept_id == "T:0003" and both[0].term_source == first.name
    alone = api.normalize(ONLY_IN_FIRST, index=index, synonyms=second, strategy="d-t")
    assert alone[0].concept_id == "T:0005"  # B only: the text is not found at T:0003
    again = api.normalize(ONLY_IN_FIRST, index=index, synonyms=[first, second], strategy="d-t")
    assert again[0].concept_id == "T:0003"
    pairs = api.normalize(ONLY_IN_FIRST, index=index, synonyms=[("T:0007", ONLY_IN_FIRST)])
    assert pairs[0].concept_id == "T:0007" and pairs[0].term_source == "domain"


def test_api_normalize_file_uses_every_synonyms_file(
    setup: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    index, first, second = setup
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    source.write_text(f"term\n{ONLY_IN_FIRST}\n")
    api.normalize_file(
        source, target, index=index, show_progress=False, synonyms=[first, second], strategy="d-t"
    )
    assert target.read_text().splitlines()[1].split(",")[1] == "T:0003"


def test_the_service_reads_every_synonyms_file(setup: tuple[Path, Path, Path]) -> None:
    index, first, second = setup
    with serving(index, synonym_files=[first, second]) as client:
        body = {"texts": [ONLY_IN_FIRST], "strategy": "d-t", "k": 1}
        answer = client.post("/v1/normalize", json=body)
        assert answer.status_code == 200, answer.text
        assert answer.json()["results"][0]["candidates"][0]["concept_id"] == "T:0003"


def test_as_sources_tells_files_from_pairs(tmp_path: Path) -> None:
    assert as_sources("a.tsv") == ["a.tsv"]
    assert as_sources(["a.tsv", tmp_path]) == [Path("a.tsv"), tmp_path]
    assert as_sources([("T:1", "x")]) == [[("T:1", "x")]]
