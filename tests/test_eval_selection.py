"""Cross-fitted selection among settings (``termnorm.lab.selection``, ``eval select``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from _cli import run_main
from _eval_fakes import prediction_row
from termnorm.lab.selection import cross_fitted_selection

Key = tuple[str, str, int, int, str]


def _data(per_doc: dict[str, list[list[int]]]) -> tuple[dict, dict[str, list[dict]], dict]:
    """Outcomes per document: [base, setting 1, setting 2, …] for each mention of it."""
    base: dict[Key, bool] = {}
    settings: dict[str, list[dict]] = {}
    groups: dict[Key, str] = {}
    for doc, mentions in per_doc.items():
        for i, row in enumerate(mentions):
            key = ("", f"{doc}:{i}", 0, 1, "m")
            base[key], groups[key] = bool(row[0]), doc
            for c, value in enumerate(row[1:]):
                settings.setdefault(f"s{c}", [{}])[0][key] = bool(value)
    return base, settings, groups


def test_a_setting_better_in_every_document_is_chosen_everywhere() -> None:
    docs = {f"d{j}": [[0, 0, 1], [1, 1, 1], [1, 1, 1]] for j in range(12)}
    base, settings, groups = _data(docs)
    result = cross_fitted_selection(base, settings, groups, n_boot=500)
    assert result.chosen == {"s0": 0, "s1": 12} and result.groups == 12 and result.n == 36
    assert result.naive_choice == "s1" and math.isclose(result.naive_delta, 1 / 3)
    assert math.isclose(result.delta, 1 / 3) and math.isclose(result.accuracy, 1.0)
    assert result.bootstrap_p == 2 / 501 and result.ci_low > 0.3


def test_a_lead_from_one_document_is_not_carried_to_it() -> None:
    """s1 beats the default s0 only in d0: the naive pick gains, the cross-fitted one not."""
    docs = {"d0": [[0, 0, 1], [0, 0, 1]], "d1": [[1, 1, 1]], "d2": [[1, 1, 1]], "d3": [[0, 0, 0]]}
    base, settings, groups = _data(docs)
    result = cross_fitted_selection(base, settings, groups, n_boot=200)
    assert result.naive_choice == "s1" and math.isclose(result.naive_delta, 2 / 5)
    # d0 left out: s0 and s1 tie on d1-d3, the tie goes to the first listed, s0
    assert result.chosen == {"s0": 1, "s1": 3}
    assert result.delta == 0.0 and result.accuracy == 2 / 5


def test_settings_pool_their_runs_per_mention() -> None:
    base, settings, groups = _data({f"d{j}": [[0, 1, 0], [1, 1, 1]] for j in range(4)})
    twice = {"s0": settings["s0"], "s1": [settings["s1"][0], settings["s0"][0]]}
    result = cross_fitted_selection(base, twice, groups, n_boot=100)
    # s1's two runs average to 0.5 on each first mention, below s0's 1.0
    assert [s.runs for s in result.settings] == [1, 2]
    assert math.isclose(result.settings[1].accuracy, 0.75)
    assert result.chosen == {"s0": 4, "s1": 0} and math.isclose(result.delta, 0.5)


def test_bad_inputs_are_refused() -> None:
    base, settings, groups = _data({"d0": [[1, 1, 0]], "d1": [[0, 1, 1]]})
    with pytest.raises(ValueError, match="at least two settings"):
        cross_fitted_selection(base, {"s0": settings["s0"]}, groups)
    with pytest.raises(ValueError, match="'s1' has no runs"):
        cross_fitted_selection(base, {"s0": settings["s0"], "s1": []}, groups)
    with pytest.raises(ValueError, match="one document"):
        cross_fitted_selection(base, settings, dict.fromkeys(base, "d"))
    with pytest.raises(ValueError, match="n_boot"):
        cross_fitted_selection(base, settings, groups, n_boot=0)


def _write(path: Path, ranks: list[int | None]) -> Path:
    """Predictions of mentions m0, m1, … in documents D0, D0, D1, D1, …"""
    rows = [
        {**prediction_row(i, rank, top=1), "doc_id": f"D{i // 2}"} for i, rank in enumerate(ranks)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_cli_select(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _write(tmp_path / "base.jsonl", [1, None, None, 1, 1, None])
    a1 = _write(tmp_path / "a1.jsonl", [1, None, 1, 1, 1, None])
    b1 = _write(tmp_path / "b1.jsonl", [1, 1, 1, 1, 1, 1])
    b2 = _write(tmp_path / "b2.jsonl", [1, 1, 1, 1, 1, None])
    args = ["eval", "select", str(base), "--setting", f"a={a1}", "--setting", f"b={b1},{b2}"]
    code, out, err = run_main([*args, "--json", "--bootstrap", "200"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["resampled"] == "documents" and result["groups"] == 3
    assert result["setting_files"] == {"a": [str(a1)], "b": [str(b1), str(b2)]}
    assert result["naive_choice"] == "b" and result["chosen"] == {"a": 0, "b": 3}
    assert math.isclose(result["delta"], (11 / 12 * 6 - 3) / 6)
    code, out, err = run_main([*args, "--unit", "mention"], capsys)
    assert code == 0, err
    assert "cross-fitted over mentions" in " ".join(out.split())
    code, _, err = run_main(["eval", "select", str(base), "--setting", f"a{a1}"], capsys)
    assert code == 2 and "NAME=FILE" in err
    code, _, err = run_main(["eval", "select", str(base), "--setting", f"a={a1}"], capsys)
    assert code == 1 and "at least two settings" in err
