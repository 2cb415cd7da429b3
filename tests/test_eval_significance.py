"""Paired significance of acc@k: McNemar, the seed-pooled bootstraps and ``eval compare``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from _cli import run_main
from _eval_fakes import prediction_row, write_prediction_file
from termnorm.lab.significance import (
    compare_runs,
    group_weight_chunks,
    mcnemar_p,
    sign_flip_p,
)

MENTIONS = "0001\tHeart-attack\n0003\tdiabetis\n0004|0009\tasthma\n-1\tbroken leg\n"


def _key(i: int) -> tuple[str, str, int, int, str]:
    return ("", f"doc:{i}", 0, 5, f"m{i}")


def _outcomes(values: list[int]) -> dict[tuple[str, str, int, int, str], bool]:
    return {_key(i): bool(v) for i, v in enumerate(values)}


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [(0, 0, 1.0), (3, 3, 1.0), (0, 5, 2 / 32), (5, 0, 2 / 32), (1, 9, 2 * 11 / 1024)],
)
def test_mcnemar_exact_values(b: int, c: int, expected: float) -> None:
    assert math.isclose(mcnemar_p(b, c), expected)


def test_mcnemar_matches_the_reported_ncbi_figure() -> None:
    # docs/training_results.md: od recipe seed 13 on NCBI devel, 14 vs 28 discordant mentions, p = 0.044
    assert round(mcnemar_p(14, 28), 3) == 0.044
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_p(-1, 2)


def test_identical_runs_have_no_effect() -> None:
    base = _outcomes([1, 0, 1, 1, 0, 1])
    result = compare_runs(base, {"same": dict(base)}, n_boot=200)
    assert result.delta == 0.0 and result.ci_low == 0.0 == result.ci_high
    assert result.bootstrap_p == 1.0
    assert result.runs[0].only_base == 0 == result.runs[0].only_run
    assert result.runs[0].mcnemar_p == 1.0


def test_a_run_right_everywhere_the_base_fails_is_significant() -> None:
    base = _outcomes([0] * 30 + [1] * 70)
    better = _outcomes([1] * 100)
    result = compare_runs(base, {"better": better}, n_boot=2000, seed=3)
    assert math.isclose(result.delta, 0.30)
    assert result.runs[0].only_run == 30 and result.runs[0].only_base == 0
    assert result.ci_low > 0.15 and result.ci_high <= 0.45
    assert result.bootstrap_p == 2 / 2001  # no draw crosses 0: (0 + 1) / (n_boot + 1), twice
    assert result.runs[0].mcnemar_p < 1e-8


def test_seeds_are_pooled_per_mention() -> None:
    base = _outcomes([0, 0, 1, 1])
    seeds = {"s1": _outcomes([1, 0, 1, 1]), "s2": _outcomes([1, 1, 1, 0])}
    result = compare_runs(base, seeds, n_boot=500, seed=0)
    # per-mention d = mean over seeds - base = [1, 0.5, 0, -0.5] -> Δ = 0.25
    assert math.isclose(result.delta, 0.25)
    assert math.isclose(result.mean_accuracy, 6 / 8)
    assert [run.delta for run in result.runs] == [0.25, 0.25]
    assert result.ci_low <= 0.25 <= result.ci_high


def test_repeating_a_run_does_not_narrow_the_interval() -> None:
    """Mentions, not runs × mentions, are resampled: two copies of a run change nothing."""
    base = _outcomes([1, 0] * 40)
    run = _outcomes([1, 1, 0, 1] * 20)
    once = compare_runs(base, {"r": run}, n_boot=3000, seed=9)
    twice = compare_runs(base, {"r": run, "r2": dict(run)}, n_boot=3000, seed=9)
    assert (once.ci_low, once.ci_high, once.bootstrap_p) == (
        twice.ci_low,
        twice.ci_high,
        twice.bootstrap_p,
    )


def test_bootstrap_is_seeded_and_chunked_draws_agree() -> None:
    base = {("", f"d:{i}", 0, 1, "t"): bool(i % 2) for i in range(5000)}
    run = {key: bool(i % 3) for i, key in enumerate(base)}
    first = compare_runs(base, {"r": run}, n_boot=2500, seed=5)  # 800 draws per chunk here
    again = compare_runs(base, {"r": run}, n_boot=2500, seed=5)
    assert (first.ci_low, first.ci_high, first.bootstrap_p) == (
        again.ci_low,
        again.ci_high,
        again.bootstrap_p,
    )
    assert first.ci_low < first.delta < first.ci_high


def test_bad_arguments_are_refused() -> None:
    base = _outcomes([1, 0, 1])
    other = {**_outcomes([1, 0]), ("", "doc:9", 0, 5, "m9"): True}
    with pytest.raises(ValueError, match=r"other mentions than the baseline .*e\.g\. missing"):
        compare_runs(base, {"other": other})
    with pytest.raises(ValueError, match="at least one run"):
        compare_runs(base, {})
    with pytest.raises(ValueError, match="no mention"):
        compare_runs({}, {"r": base})
    with pytest.raises(ValueError, match="confidence"):
        compare_runs(base, {"r": base}, confidence=1.5)
    with pytest.raises(ValueError, match="n_boot"):
        compare_runs(base, {"r": base}, n_boot=0)


def test_cli_compare_json_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_prediction_file(tmp_path / "base.jsonl", [1, 2, None, 1])
    s1 = write_prediction_file(tmp_path / "s1.jsonl", [1, 1, 4, 1])
    s2 = write_prediction_file(tmp_path / "s2.jsonl", [1, 1, 1, 2])
    code, out, err = run_main(
        ["eval", "compare", str(base), str(s1), str(s2), "--json", "--bootstrap", "300"], capsys
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["base_file"] == str(base) and result["run_files"] == [str(s1), str(s2)]
    assert result["n"] == 4 and result["base_name"] == "base"
    assert [r["name"] for r in result["runs"]] == ["s1", "s2"]
    assert [(r["only_base"], r["only_run"]) for r in result["runs"]] == [(0, 1), (1, 2)]
    assert math.isclose(result["delta"], 0.25)
    code, out, _ = run_main(["eval", "compare", str(base), str(s1), "-k", "5"], capsys)
    assert code == 0 and "acc@5 on 4 mentions" in out and "p =" in out


def test_cli_compare_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_prediction_file(tmp_path / "base.jsonl", [1, None])
    other = write_prediction_file(tmp_path / "other.jsonl", [1, None, 1])
    code, _, err = run_main(["eval", "compare", str(base), str(other)], capsys)
    assert code == 1 and "other mentions than the baseline" in " ".join(err.split())
    code, _, err = run_main(["eval", "compare", str(base), str(tmp_path / "nope.jsonl")], capsys)
    assert code == 1 and err.startswith("error:") and "--predictions" in err
    code, _, err = run_main(["eval", "compare", str(base), str(base)], capsys)
    assert code == 2 and "each file once" in " ".join(err.split())


def test_compare_reads_what_eval_normalize_writes(
    tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    mentions = tmp_path / "a" / "mentions.tsv"
    mentions.write_text(MENTIONS)
    paths = {}
    # the same dataset, read through two spellings of its path
    for kind, spelled in (
        ("exact", mentions),
        ("tfidf", tmp_path / "a" / ".." / "a" / "mentions.tsv"),
    ):
        paths[kind] = tmp_path / f"{kind}.jsonl"
        args = ["eval", "normalize", "--baseline", kind, "--kg", str(tiny_kg_dir), str(spelled)]
        code, _, err = run_main([*args, "--predictions", str(paths[kind]), "--json"], capsys)
        assert code == 0, err
    code, out, err = run_main(
        ["eval", "compare", str(paths["exact"]), str(paths["tfidf"]), "--json"], capsys
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["n"] == 2  # the composite and the unlinkable mention are not scored
    assert result["base_accuracy"] == 0.5  # exact misses the typo "diabetis"
    assert result["runs"][0]["only_run"] == 1 and result["runs"][0]["accuracy"] == 1.0


def _clustered(docs: list[tuple[int, int]], copies: int) -> tuple[dict, dict, dict]:
    """Base and run outcomes with ``copies`` identical mentions per document, and their docs."""
    base, run, groups = {}, {}, {}
    for doc, (a, y) in enumerate(docs):
        for copy in range(copies):
            key = ("", f"doc{doc}:{copy}", 0, 5, "m")
            base[key], run[key], groups[key] = bool(a), bool(y), f"d{doc}"
    return base, run, groups


def test_resampling_documents_ignores_repeats_within_a_document() -> None:
    """Four copies of each mention narrow the mention bootstrap, not the document one."""
    docs = [(0, 1)] * 8 + [(1, 0)] * 4 + [(1, 1)] * 18
    base1, run1, groups1 = _clustered(docs, 1)
    once = compare_runs(base1, {"r": run1}, n_boot=4000, seed=2)
    per_doc_once = compare_runs(base1, {"r": run1}, n_boot=4000, seed=2, groups=groups1)
    base, run, groups = _clustered(docs, 4)
    by_mention = compare_runs(base, {"r": run}, n_boot=4000, seed=2)
    by_document = compare_runs(base, {"r": run}, n_boot=4000, seed=2, groups=groups)
    assert math.isclose(by_document.delta, 4 / 30) and by_document.documents == 30
    assert by_mention.documents is None and once.documents is None
    # the same draws of 30 documents, whatever the copies inside them
    assert (by_document.ci_low, by_document.ci_high, by_document.bootstrap_p) == (
        per_doc_once.ci_low,
        per_doc_once.ci_high,
        per_doc_once.bootstrap_p,
    )
    width = lambda r: r.ci_high - r.ci_low  # noqa: E731
    assert width(by_mention) < 0.7 * width(by_document)
    assert abs(width(once) - width(by_document)) < 0.05


def test_group_weights_do_not_depend_on_the_chunking() -> None:
    whole = np.concatenate(list(group_weight_chunks(7, 100, seed=3)))
    chunked = list(group_weight_chunks(7, 100, seed=3, cells=20))
    assert len(chunked) == 50 and whole.shape == (100, 7)  # 20 // 7 = 2 draws per chunk
    assert np.array_equal(whole, np.concatenate(chunked))
    assert (whole.sum(axis=1) == 7).all()


def test_documents_must_cover_every_mention_and_be_two_or_more() -> None:
    base = _outcomes([1, 0, 1])
    with pytest.raises(ValueError, match="1 mentions have no document"):
        compare_runs(base, {"r": base}, groups={_key(0): "a", _key(1): "b"})
    with pytest.raises(ValueError, match=r"one document .*--unit mention"):
        compare_runs(base, {"r": base}, groups=dict.fromkeys(base, "a"))


def _write_docs(path: Path, ranks: list[int | None], per_doc: int = 2) -> Path:
    rows = [
        {**prediction_row(i, rank), "doc_id": f"D{i // per_doc}"} for i, rank in enumerate(ranks)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_cli_compare_resamples_documents_when_there_are_some(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _write_docs(tmp_path / "base.jsonl", [1, 2, None, 1, 2, 2])
    run = _write_docs(tmp_path / "run.jsonl", [1, 1, 1, 1, 2, 1])
    code, out, err = run_main(["eval", "compare", str(base), str(run), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["documents"] == 3
    code, out, _ = run_main(["eval", "compare", str(base), str(run), "--unit", "mention"], capsys)
    assert code == 0 and "over mentions" in " ".join(out.split())
    code, out, _ = run_main(["eval", "compare", str(base), str(run)], capsys)
    assert code == 0 and "over 3 documents" in " ".join(out.split())
    # files without documents: auto resamples mentions, --unit document says what to do
    plain = write_prediction_file(tmp_path / "plain.jsonl", [1, 2, None])
    plain_run = write_prediction_file(tmp_path / "plain_run.jsonl", [1, 1, 1])
    code, out, _ = run_main(["eval", "compare", str(plain), str(plain_run)], capsys)
    assert code == 0 and "over mentions" in " ".join(out.split())
    code, _, err = run_main(
        ["eval", "compare", str(plain), str(plain_run), "--unit", "document"], capsys
    )
    assert code == 1 and "--unit mention" in " ".join(err.split())


def test_sign_flip_p_matches_the_exact_randomization_distribution() -> None:
    # five units all +1: only the all-plus and all-minus sign vectors are as extreme, 2 / 32
    assert abs(sign_flip_p(np.ones(5), 40_000, seed=1) - 2 / 32) < 0.006
    # +3, +1, -1: the eight sign vectors give sums ±3, ±5, ±1, ±3; six have |sum| >= 3
    assert abs(sign_flip_p(np.array([3.0, 1.0, -1.0]), 40_000, seed=1) - 6 / 8) < 0.01
    assert sign_flip_p(np.zeros(4), 100, seed=0) == 1.0


def test_compare_reports_the_sign_flip_p_over_its_units() -> None:
    docs = [(0, 1)] * 8 + [(1, 1)] * 22
    base, run, groups = _clustered(docs, 3)
    by_document = compare_runs(base, {"r": run}, n_boot=20_000, seed=4, groups=groups)
    by_mention = compare_runs(base, {"r": run}, n_boot=20_000, seed=4)
    # 8 documents gain, none loses: exact p = 2 / 2**8 over documents
    assert abs(by_document.permutation_p - 2 / 256) < 0.003
    assert by_mention.permutation_p < 1e-3  # 24 mentions treated as independent
