"""A recall stage with fixed answers, for the stages that reorder recalled candidates."""

from __future__ import annotations

from collections.abc import Sequence

from termnorm.search.candidate import Candidate, RowResult


class ListRecall:
    """A recall stage answering fixed candidate lists by query text."""

    name = "fixed"

    def __init__(self, lists: dict[str, list[Candidate]]) -> None:
        self.lists = lists

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        return ()

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        return [r.candidates for r in self.normalize_rows(texts, k)]

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        return [RowResult(self.lists[str(t)][:k]) for t in texts]
