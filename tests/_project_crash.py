"""A ``map run`` in its own process for the kill -9 test: a fake matcher that sleeps per
batch (so the test can kill it between and during commits). Usage:
``python _project_crash.py DB``."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from termnorm.projects import run_project
from termnorm.search.candidate import Candidate, RowResult


class SlowMatcher:
    """Three candidates per text, after a pause per batch."""

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        time.sleep(0.05)
        return [
            RowResult(
                [Candidate(f"T:{i:04d}", f"c{i}", 1.0 / i, str(t), i) for i in range(1, k + 1)]
            )
            for t in texts
        ]


def build(_spec: object, _synonyms: object) -> SlowMatcher:
    return SlowMatcher()


if __name__ == "__main__":
    run_project("big", build, db=sys.argv[1], batch_rows=50, show_progress=False)  # type: ignore[arg-type]
