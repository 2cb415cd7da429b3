"""Relatedness: correlations between cosine and human scores, pair-file reading, coverage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _eval_fakes import FakeEncoder
from conftest import require_benchmarks
from termnorm.errors import EmptyResultError, InputFormatError
from termnorm.evaluation.relatedness import RelatednessEvaluator, read_pairs

SCORES = [1.0, 2.5, 3.0, 7.0, 4.0, 9.5]


def monotone_encoder(n: int = len(SCORES)) -> FakeEncoder:
    """cos(a_i, b_i) rises with SCORES[i]: b_i at an angle that shrinks as the score grows."""
    table = {}
    for i, score in enumerate(SCORES[:n]):
        angle = (10.0 - score) / 10.0 * (np.pi / 2)
        table[f"a{i}"] = [1.0, 0.0]
        table[f"b{i}"] = [np.cos(angle), np.sin(angle)]
    return FakeEncoder(table)


def write_tsv(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    path.write_text("".join(f"{a}\t{b}\t{s}\r\n" for a, b, s in rows))
    return path


def test_monotone_similarity_gives_spearman_one(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "pairs.tsv", [(f"a{i}", f"b{i}", s) for i, s in enumerate(SCORES)])
    metrics = RelatednessEvaluator(path)(monotone_encoder())
    assert metrics["relatedness_spearman"] == pytest.approx(1.0)
    assert 0.9 < metrics["relatedness_pearson"] <= 1.0
    assert metrics["relatedness_coverage"] == 1.0
    assert metrics["relatedness_pairs"] == len(SCORES)


def test_reversed_scores_give_spearman_minus_one(tmp_path: Path) -> None:
    rows = [(f"a{i}", f"b{i}", -s) for i, s in enumerate(SCORES)]
    ev = RelatednessEvaluator(write_tsv(tmp_path / "p.tsv", rows), name="umnsrs")
    assert ev.primary_metric == "umnsrs_spearman"
    assert ev(monotone_encoder())["umnsrs_spearman"] == pytest.approx(-1.0)


def test_mayosrs_style_csv_has_one_score_per_rater_group(tmp_path: Path) -> None:
    lines = ['"Physicians","Coders","CUI1","CUI2","TERM1","TERM2"']
    for i, s in enumerate(SCORES):
        lines.append(f'{s},{-s},"C{i}","D{i}","a{i}","b{i}"')
    path = tmp_path / "mayo.csv"
    path.write_text("\n".join(lines) + "\n")
    pairs = read_pairs(path)
    assert list(pairs.scores) == ["physicians", "coders"]
    metrics = RelatednessEvaluator(pairs, name="mayosrs")(monotone_encoder())
    assert metrics["mayosrs_spearman_physicians"] == pytest.approx(1.0)
    assert metrics["mayosrs_spearman_coders"] == pytest.approx(-1.0)
    assert np.isnan(metrics["mayosrs_spearman"])  # the mean of ±s is constant


def test_pairs_with_an_empty_term_are_reported(tmp_path: Path) -> None:
    rows = [(f"a{i}", f"b{i}", s) for i, s in enumerate(SCORES)] + [("a0", "", 5.0)]
    result = RelatednessEvaluator(write_tsv(tmp_path / "p.tsv", rows)).evaluate(monotone_encoder())
    assert result.evaluated == len(SCORES) and result.pairs == len(SCORES) + 1
    assert result.coverage == pytest.approx(len(SCORES) / (len(SCORES) + 1))
    assert result.skipped == [(len(SCORES) + 1, "a0", "")]
    assert result.spearman == pytest.approx(1.0)


def test_a_model_returning_nan_is_reported_not_crashed_on(tmp_path: Path) -> None:
    enc = monotone_encoder()
    enc.table["b5"] = np.array([np.nan, np.nan], dtype=np.float32)
    rows = [(f"a{i}", f"b{i}", s) for i, s in enumerate(SCORES)]
    result = RelatednessEvaluator(write_tsv(tmp_path / "p.tsv", rows)).evaluate(enc)
    assert result.evaluated == len(SCORES) - 1


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match=r"missing\.tsv: relatedness pair file not found"):
        read_pairs(tmp_path / "missing.tsv")
    (tmp_path / "empty.tsv").write_text("\n\n")
    with pytest.raises(EmptyResultError, match=r"empty\.tsv"):
        read_pairs(tmp_path / "empty.tsv")
    (tmp_path / "bad.tsv").write_text("a\tb\t1\n\nc\td\tlots\n")
    with pytest.raises(InputFormatError, match=r"bad\.tsv:3: score 'lots' is not a number"):
        read_pairs(tmp_path / "bad.tsv")
    (tmp_path / "short.tsv").write_text("a\tb\n")
    with pytest.raises(InputFormatError, match=r"short\.tsv:1: expected term1, term2, score"):
        read_pairs(tmp_path / "short.tsv")


def test_all_pairs_unembeddable_is_an_error(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "p.tsv", [("", "b0", 1.0), (" ", "b1", 2.0)])
    with pytest.raises(EmptyResultError, match=r"no pair in .*p\.tsv could be embedded"):
        RelatednessEvaluator(path)(monotone_encoder())


def test_shared_pair_files_are_read() -> None:
    mayo = read_pairs(require_benchmarks("mayosrs", "MiniMayoSRS.csv"))
    assert len(mayo) == 29 and set(mayo.scores) == {"physicians", "coders"}
    umn = read_pairs(require_benchmarks("umnsrs", "umnsrs-sim.txt"))
    assert len(umn) == 566 and list(umn.scores) == ["score"]
