"""The pipeline's answers do not move: a fixture file batch-normalized with ``-k 3`` by the
CLI and by the API gives the committed bytes (``tests/data/golden``), row for row.

Written before the faces were switched onto one pipeline spec: any change of behaviour in
how ``termnorm normalize --input`` or ``termnorm.normalize_file`` assemble the search shows
up here as a diff of the expected file. Regenerate it only for an intended change:
``TERMNORM_REGOLD=1 pytest tests/test_pipeline_golden.py``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from termnorm import api
from termnorm.cli.main import main

GOLDEN = Path(__file__).parent / "data" / "golden"
CASES = {  # expected file: (CLI options, the same as API keywords)
    "terms.k3.expected.csv": ([], {}),
    "terms.k3.options.expected.csv": (
        ["--synonyms", str(GOLDEN / "synonyms.tsv"), "--min-score", "0.99",
         "--type", "cardio", "--type", "lung"],
        {"synonyms": GOLDEN / "synonyms.tsv", "min_score": 0.99,
         "semantic_types": ["cardio", "lung"]},
    ),
}  # fmt: skip


def _cli(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code in (0, None)


@pytest.mark.parametrize("expected", sorted(CASES))
def test_batch_output_is_byte_identical_through_cli_and_api(
    expected: str, index_dir: Path, tmp_path: Path
) -> None:
    flags, keywords = CASES[expected]
    source = tmp_path / "terms.csv"
    shutil.copy(GOLDEN / "terms.csv", source)
    by_cli, by_api = tmp_path / "cli.csv", tmp_path / "api.csv"
    _cli(
        [
            "normalize",
            "--index",
            str(index_dir),
            "--input",
            str(source),
            "--output",
            str(by_cli),
            "-k",
            "3",
            *flags,
        ]
    )
    api.normalize_file(source, by_api, index=index_dir, k=3, show_progress=False, **keywords)
    if os.environ.get("TERMNORM_REGOLD"):
        (GOLDEN / expected).write_bytes(by_cli.read_bytes())
    assert by_cli.read_bytes() == by_api.read_bytes()
    assert_same_but_float_noise(by_cli.read_text(), (GOLDEN / expected).read_text())


SCORE = re.compile(r"\d+\.\d{4,}")


def assert_same_but_float_noise(got: str, expected: str, tolerance: float = 5e-6) -> None:
    """``got`` is ``expected`` character for character, except that each score may differ in
    its last printed digit: the tiny BERT's cosines move by 1e-6 between CPU kernels (AVX2 and
    AVX-512 sum in another order), and the golden file must hold on every machine."""
    assert SCORE.sub("#", got) == SCORE.sub("#", expected)
    pairs = zip(SCORE.findall(got), SCORE.findall(expected), strict=True)
    far = [(g, e) for g, e in pairs if abs(float(g) - float(e)) > tolerance]
    assert not far, f"scores moved beyond {tolerance}: {far[:5]}"


def test_float_noise_is_all_the_golden_comparison_forgives() -> None:
    assert_same_but_float_noise("a,0.999983,b", "a,0.999984,b")
    with pytest.raises(AssertionError):
        assert_same_but_float_noise("a,0.999983,b", "a,0.998983,b")
    with pytest.raises(AssertionError):
        assert_same_but_float_noise("T:0001,0.5000", "T:0002,0.5000")
