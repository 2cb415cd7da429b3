"""Paired significance of acc@k: McNemar, the seed-pooled bootstrap and ``eval compare``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from tests._cli import run_main

from termnorm.evaluation.significance import compare_runs, mcnemar_p, read_correctness


def _key(i: int) -> tuple[str, str, int, int, str]:
    return ("", f"doc:{i}", 0, 5, f"m{i}")


def _outcomes(values: list[int]) -> dict[tuple[str, str, int, int, str], bool]:
    return {_key(i): bool(v) for i, v in enumerate(values)}


def _write_predictions(path: Path, correct: list[int], ranks: list[int | None]) -> Path:
    rows = [
        {
            "text": f"m{i}",
            "kind": "simple",
            "location": f"doc:{i}",
            "start": 0,
            "end": 5,
            "correct_at_1": bool(c),
            "rank": r,
        }
        for i, (c, r) in enumerate(zip(correct, ranks, strict=True))
    ]
    rows.append(
        {
            "text": "a and b",
            "kind": "composite",
            "location": "doc:x",
            "start": 0,
            "end": 7,
            "correct_at_1": False,
            "rank": None,
        }
    )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [(0, 0, 1.0), (3, 3, 1.0), (0, 5, 2 / 32), (5, 0, 2 / 32), (1, 9, 2 * 11 / 1024)],
)
def test_mcnemar_exact_values(b: int, c: int, expected: float) -> None:
    assert math.isclose(mcnemar_p(b, c), expected)


def test_mcnemar_matches_the_reported_ncbi_figure() -> None:
    # README: od recipe seed 13 on NCBI devel, 14 vs 28 discordant mentions, p = 0.044
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
    assert result.bootstrap_p == 1 / 2000  # no draw at or below 0: floored at 1 / n_boot
    assert result.bootstrap_p_text == "p ≤ 0.0005"
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


def test_bootstrap_is_seeded() -> None:
    base = _outcomes([1, 0] * 20)
    run = _outcomes([1, 1, 0, 1] * 10)
    first = compare_runs(base, {"r": run}, n_boot=300, seed=5)
    again = compare_runs(base, {"r": run}, n_boot=300, seed=5)
    assert (first.ci_low, first.ci_high, first.bootstrap_p) == (
        again.ci_low,
        again.ci_high,
        again.bootstrap_p,
    )


def test_runs_on_other_mentions_are_refused() -> None:
    base = _outcomes([1, 0, 1])
    other = {**_outcomes([1, 0]), ("", "doc:9", 0, 5, "m9"): True}
    with pytest.raises(ValueError, match="other mentions than the baseline"):
        compare_runs(base, {"other": other})
    with pytest.raises(ValueError, match="at least one run"):
        compare_runs(base, {})
    with pytest.raises(ValueError, match="confidence"):
        compare_runs(base, {"r": base}, confidence=1.5)


def test_read_correctness_skips_composites_and_uses_rank_for_k(tmp_path: Path) -> None:
    path = _write_predictions(tmp_path / "p.jsonl", [1, 0, 0], [1, 3, None])
    assert list(read_correctness(path, 1).values()) == [True, False, False]
    assert list(read_correctness(path, 5).values()) == [True, True, False]
    (tmp_path / "bad.jsonl").write_text('{"concept_id": "X"}\n')
    with pytest.raises(ValueError, match="not a prediction record"):
        read_correctness(tmp_path / "bad.jsonl")
    with pytest.raises(FileNotFoundError, match="--predictions"):
        read_correctness(tmp_path / "missing.jsonl")


def test_cli_compare_json_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _write_predictions(tmp_path / "base.jsonl", [1, 0, 0, 1], [1, 2, None, 1])
    s1 = _write_predictions(tmp_path / "s1.jsonl", [1, 1, 0, 1], [1, 1, 4, 1])
    s2 = _write_predictions(tmp_path / "s2.jsonl", [1, 1, 1, 0], [1, 1, 1, 2])
    code, out, err = run_main(
        ["eval", "compare", str(base), str(s1), str(s2), "--json", "--bootstrap", "300"], capsys
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["n"] == 4 and result["base_name"] == "base"
    assert [r["name"] for r in result["runs"]] == ["s1", "s2"]
    assert [(r["only_base"], r["only_run"]) for r in result["runs"]] == [(0, 1), (1, 2)]
    assert math.isclose(result["delta"], 0.25)
    code, out, _ = run_main(["eval", "compare", str(base), str(s1), "-k", "5"], capsys)
    assert code == 0 and "acc@5 on 4 mentions" in out and "p =" in out


def test_cli_compare_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _write_predictions(tmp_path / "base.jsonl", [1, 0], [1, None])
    other = _write_predictions(tmp_path / "other.jsonl", [1, 0, 1], [1, None, 1])
    code, _, err = run_main(["eval", "compare", str(base), str(other)], capsys)
    assert code == 2 and "other mentions than the baseline" in " ".join(err.split())
    code, _, err = run_main(["eval", "compare", str(base), str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2 and "--predictions" in " ".join(err.split())


def test_compare_reads_what_eval_normalize_writes(
    tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mentions = tmp_path / "mentions.tsv"
    mentions.write_text("0001\tHeart-attack\n0003\tdiabetis\n0004|0009\tasthma\n-1\tbroken leg\n")
    paths = {}
    for kind in ("exact", "tfidf"):
        paths[kind] = tmp_path / f"{kind}.jsonl"
        args = ["eval", "normalize", "--baseline", kind, "--kg", str(tiny_kg_dir), str(mentions)]
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
