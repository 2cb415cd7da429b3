"""``termnorm bench`` on tiny fixtures: a Markdown report with PNGs, cached on the rerun."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from termnorm.errors import InputFormatError
from termnorm.lab.bench import load_spec, run_bench, write_report
from termnorm.losses.relation_head import RelationHead

pytest.importorskip("matplotlib")


@pytest.fixture()
def suite(tmp_path: Path, tiny_bert_path: Path, tiny_kg_dir: Path) -> Path:
    """Data, two models (one with a relation head), baselines, every evaluator."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "mentions.tsv").write_text(
        "0001\theart attack\n0002\thigh blood pressure\n0004\tasthma attack\n0006\tlung infection\n"
    )
    fold = data / "fold_0"
    fold.mkdir()
    (fold / "standard.txt").write_text("100\tback pain\n200\theadache\n300\tnausea\n")
    (fold / "test.txt").write_text("100\tpain in my back\n200\thead ache\n300\tfeel sick\n")
    (data / "pairs.tsv").write_text(
        "heart attack\tmyocardial infarction\t9\nasthma\tmigraine\t1\nanemia\tanaemia\t10\n"
        "lung disease\tpneumonia\t6\ndiabetes\tthyroid removal\t0.5\n"
    )
    shutil.copytree(tiny_kg_dir, data / "kg")
    relational = tmp_path / "models" / "relational"
    shutil.copytree(tiny_bert_path, relational)
    RelationHead(["isa", "risk_factor_of"], 32).save(relational)
    spec = {
        "name": "tiny",
        "data_root": "data",
        "models": {
            "tiny": {"path": str(tiny_bert_path), "pooling": "mean"},
            "tiny-rel": {"path": "models/relational", "pooling": "mean"},
        },
        "baselines": ["exact", "tfidf"],
        "kgs": {"tiny": {"path": "kg"}},
        "datasets": {
            "mentions": {"evaluator": "normalization", "path": "mentions.tsv", "kg": "tiny"},
            "fold": {"evaluator": "zero-shot", "path": "fold_0"},
            "pairs": {"evaluator": "relatedness", "path": "pairs.tsv"},
            "tiny-mcsm": {"evaluator": "mcsm", "kg": "tiny", "options": {"k": 5}},
            "tiny-clusters": {"evaluator": "clustering", "kg": "tiny"},
            "tiny-rel": {"evaluator": "relation", "kg": "tiny", "options": {"epochs": 5}},
            "tiny-lp": {
                "evaluator": "linkpred",
                "kg": "tiny",
                "options": {"test_fraction": 0.4},
            },
        },
        "tsne": {"kg": "tiny", "concepts": 5, "types": 3, "per_type": 3},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_bench_writes_report_and_plots_then_hits_the_cache(suite: Path, tmp_path: Path) -> None:
    spec = load_spec(suite)
    cache = tmp_path / "cache"
    first = run_bench(spec, cache_dir=cache)
    assert not [c.error for c in first.cells if c.error]
    cells = {(c.model, c.dataset): c for c in first.cells}
    assert cells[("exact", "tiny-mcsm")].note == "baselines have no vectors"
    assert cells[("tiny", "tiny-lp")].note == "no relation head"
    assert "mrr" in cells[("tiny-rel", "tiny-lp")].metrics
    # exact match finds 3 of 4 mentions: "asthma attack" is no term of the KG
    assert cells[("exact", "mentions")].metrics["acc@1"] == pytest.approx(0.75)
    assert "spearman" in cells[("tiny", "pairs")].metrics

    out = tmp_path / "report"
    report = write_report(first, out, "termnorm bench suite.yaml --out report")
    text = report.read_text()
    assert "termnorm bench suite.yaml --out report" in text
    assert "## Normalization: acc@1 (%)" in text and "**" in text
    assert "| model | fold | mentions |" in text  # datasets in suite order
    for png in ("acc_at_k.png", "mcsm_per_type.png", "clustering_f1_theta.png", "tsne_tiny.png"):
        assert (out / png).stat().st_size > 1000, png
        assert f"({png})" in text
    assert (out / "results.json").is_file()

    second = run_bench(spec, cache_dir=cache)
    assert second.cache_misses == 0
    assert all(c.cached for c in second.cells if c.note is None)
    assert [c.metrics for c in second.cells] == [c.metrics for c in first.cells]


def test_bench_cli_runs_a_restricted_suite(suite: Path, tmp_path: Path, capsys) -> None:
    from termnorm.cli.main import main

    out = tmp_path / "cli-report"
    args = ["bench", str(suite), "--out", str(out), "--cache-dir", str(tmp_path / "c")]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--model", "exact", "--dataset", "mentions"])
    assert exit_info.value.code == 0
    assert "wrote" in capsys.readouterr().out
    text = (out / "report.md").read_text()
    assert "--model exact --dataset mentions" in text


def test_suite_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match=r"nope\.yaml: benchmark suite file not found"):
        load_spec(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("models: {m: default}\ndatasets:\n  d: {evaluator: relatedness, path: x.tsv}\n")
    with pytest.raises(InputFormatError, match=r"bad\.yaml: dataset 'd': .*x\.tsv not found"):
        load_spec(bad)
    bad.write_text("models: {m: default}\ndatasets:\n  d: {evaluator: magic}\n")
    with pytest.raises(InputFormatError, match="evaluator must be one of"):
        load_spec(bad)
    bad.write_text("models: {m: default}\ndatasets:\n  d: {evaluator: mcsm, kg: none}\n")
    with pytest.raises(InputFormatError, match="needs a kg"):
        load_spec(bad)
    bad.write_text("modles: {}\n")
    with pytest.raises(InputFormatError, match=r"unknown key\(s\) \['modles'\]"):
        load_spec(bad)


def test_shipped_dev_suite_parses() -> None:
    from conftest import require_benchmarks

    require_benchmarks()
    spec = load_spec(Path(__file__).resolve().parents[1] / "benchmarks" / "dev.yaml")
    names = {d.name for d in spec.datasets}
    assert {"ncbi-devel", "bc5cdr-dev", "cadec-0", "psytar-1", "mayosrs", "umnsrs-sim"} <= names


def test_a_built_kg_is_cached_per_loader_code(tmp_path: Path, monkeypatch) -> None:
    from termnorm.lab.bench import session as bench_session
    from termnorm.lab.bench.cache import ResultCache

    medic = Path(__file__).parent / "fixtures" / "kg" / "medic" / "medic_biosyn.txt"
    spec_path = tmp_path / "suite.yaml"
    spec_path.write_text(
        yaml.safe_dump(
            {
                "name": "kgs",
                "data_root": str(medic.parent),
                "baselines": ["exact"],
                "kgs": {"medic": {"format": "medic", "path": medic.name}},
                "datasets": {
                    "m": {"evaluator": "normalization", "path": medic.name, "kg": "medic"}
                },
            }
        )
    )
    cache = ResultCache(tmp_path / "cache")
    real = bench_session.loader_code()
    assert len(real) == 16 and real == bench_session.loader_code()

    def built(code: str) -> set[str]:
        monkeypatch.setattr(bench_session, "loader_code", lambda: code)
        session = bench_session.BenchSession(load_spec(spec_path), cache)
        assert len(session.kg("medic").concepts) == 19
        return {p.name for p in (tmp_path / "cache" / "kgs").iterdir()}

    first = built("loaders-v1")
    assert len(first) == 1
    assert built("loaders-v1") == first  # same loader code: the cached KG is reused
    assert len(built("loaders-v2")) == 2  # changed loader code: built again


def test_session_keeps_one_encoder_and_index_per_model_until_cleared(suite: Path) -> None:
    from termnorm.lab.bench import BenchSession
    from termnorm.lab.bench.cache import ResultCache

    spec = load_spec(suite)
    session = BenchSession(spec, ResultCache(suite.parent / "cache"))
    model = spec.model("tiny")
    encoder = session.encoder(model)
    assert session.encoder(model) is encoder
    index = session.index(encoder, "tiny")
    assert session.index(encoder, "tiny") is index
    kg = session.kg("tiny")
    session.clear_model()
    assert session.encoder(model) is not encoder  # loaded again, with an empty memo
    assert session.index(encoder, "tiny") is not index  # read again from the cache folder
    assert session.kg("tiny") is kg  # KGs serve every model: kept
    with pytest.raises(ValueError, match="lexical baseline: it has no encoder"):
        session.encoder(spec.model("exact"))


def test_missing_lab_extra_is_named(suite: Path, tmp_path: Path, monkeypatch) -> None:
    import dataclasses
    import sys

    from termnorm.errors import MissingExtraError
    from termnorm.lab.bench.plots import write_plots

    spec = load_spec(suite)
    small = dataclasses.replace(spec, models=[spec.model("exact")], datasets=spec.datasets[:1])
    results = run_bench(small, cache_dir=tmp_path / "cache")
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(MissingExtraError, match=r"pyyaml .*termnorm\[lab\]"):
        load_spec(suite)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtraError, match=r"matplotlib .*termnorm\[lab\]"):
        write_plots(results, tmp_path / "plots")
