"""Prediction files: one JSON object per mention, written and read here only.

``termnorm eval normalize --predictions FILE`` writes them (through
:meth:`NormalizationReport.write_predictions
<termnorm.evaluation.normalization.NormalizationReport.write_predictions>` and
:meth:`ZeroShotReport.write_predictions
<termnorm.evaluation.zero_shot.ZeroShotReport.write_predictions>`); ``eval compare``,
``eval select`` and the benchmark scripts read them. A file is UTF-8 JSON Lines, one record
per mention in dataset order, keys in this order:

``fold``
    the zero-shot fold the mention belongs to (zero-shot files only; the first key).
``text``, ``gold_ids``, ``kind``
    the mention text, its gold concept IDs and its kind (``simple``, ``composite``,
    ``unlinkable``; :class:`~termnorm.mentions.MentionKind`).
``doc_id``, ``start``, ``end``, ``location``
    where it was read: document, character offsets, ``file:line``.
``rank``
    the position of the first correct candidate (1-based), ``null`` when none is correct.
``correct_at_1``
    ``rank == 1``.
``parts``, ``part_ranks``
    a composite's parts and each part's first-hit rank (empty lists otherwise).
``error``
    the matcher's error on this text (``null`` when it answered).
``query``, ``expanded_from``
    when the mention was answered through its abbreviation-expanded text
    (:mod:`termnorm.search.context`): that text, and the mention's text; both ``null``
    otherwise.
``predictions``
    the ranked candidates: each :class:`~termnorm.search.candidate.Candidate`'s fields
    (``expanded_from`` included), with ``rank`` (1-based) and ``correct`` (whether it matches
    a gold ID).

Readers key a mention by :data:`MentionKey`: its fold, its file name and line (not the full
path, so the same dataset read through another path still matches), its offsets and text.
Only simple mentions are compared (:func:`read_correctness`, :func:`read_documents`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.errors import InputFormatError

if TYPE_CHECKING:
    from termnorm.mentions import Mention
    from termnorm.search.candidate import Candidate

__all__ = [
    "MentionKey",
    "MentionResult",
    "mention_key",
    "prediction_record",
    "read_correctness",
    "read_documents",
    "read_records",
    "write_records",
]

MentionKey = tuple[str, str, int | None, int | None, str]
"""(fold, file name and line, start, end, text) of a mention; see the module doc."""

REQUIRED_KEYS = frozenset({"kind", "text", "rank", "predictions"})
_WRITE_ONE = "'termnorm eval normalize ... --predictions FILE'"


@dataclass(frozen=True)
class MentionResult:
    """What the matcher returned for one mention, with the hit flags and ranks."""

    mention: Mention
    candidates: tuple[Candidate, ...]
    hits: tuple[bool, ...]
    rank: int | None
    parts: tuple[str, ...] = ()
    part_ranks: tuple[int | None, ...] = ()
    error: str | None = None
    query: str | None = None
    """The text searched when it is not the mention's (its abbreviation-expanded text)."""

    @property
    def parts_rank(self) -> int | None:
        """Rank under the *parts* rule: the worst part's first-hit rank (``None`` if a miss)."""
        if not self.part_ranks:
            return self.rank
        if any(r is None for r in self.part_ranks):
            return None
        return max(r for r in self.part_ranks if r is not None)


def prediction_record(result: MentionResult, fold: str | None = None) -> dict[str, Any]:
    """The record of one mention's result (keys as in the module doc; ``fold`` first if given)."""
    m = result.mention
    return {
        **({} if fold is None else {"fold": fold}),
        "text": m.text,
        "gold_ids": list(m.gold_ids),
        "kind": m.kind.value,
        "doc_id": m.doc_id,
        "start": m.start,
        "end": m.end,
        "location": m.location,
        "rank": result.rank,
        "correct_at_1": result.rank == 1,
        "parts": list(result.parts),
        "part_ranks": list(result.part_ranks),
        "error": result.error,
        "query": result.query,
        "expanded_from": None if result.query is None else m.text,
        "predictions": [
            {**c.to_dict(), "rank": i, "correct": hit}
            for i, (c, hit) in enumerate(zip(result.candidates, result.hits, strict=True), 1)
        ],
    }


def write_records(path: str | Path, records: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``records`` one JSON object a line (UTF-8, non-ASCII kept); return ``path``.

    The parent folder is created; an existing file is replaced.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def _record(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        row = None
    if not isinstance(row, dict) or not row.keys() >= REQUIRED_KEYS:
        raise InputFormatError(
            path,
            number,
            "not a prediction record (needs kind, text, rank, predictions); use the file "
            f"{_WRITE_ONE} writes",
        )
    return row


def _numbered_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for every non-blank line of a predictions file."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no predictions file; write one with {_WRITE_ONE}")
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                yield number, _record(path, number, line)


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a predictions file, in file order.

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        InputFormatError: a line that is not a prediction record.
    """
    return [row for _, row in _numbered_records(Path(path))]


def _portable(location: object) -> str:
    """``/any/dir/file:12`` → ``file:12``: the mention's place, whatever path was typed."""
    where, _, line = str(location).rpartition(":")
    if not line.isdigit():
        return Path(str(location)).name
    return f"{Path(where).name}:{line}"


def mention_key(record: Mapping[str, Any]) -> MentionKey:
    """The :data:`MentionKey` of a prediction record (see the module doc)."""
    return (
        str(record.get("fold", "")),
        _portable(record.get("location", "")),
        record.get("start"),
        record.get("end"),
        record["text"],
    )


def read_correctness(path: str | Path, k: int = 1) -> dict[MentionKey, bool]:
    """``{mention key: rank ≤ k}`` for the simple mentions of one predictions file.

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        InputFormatError: a line that is not a prediction record, a mention listed twice, a
            file with no simple mention, or one listing fewer than ``k`` candidates.
    """
    path = Path(path)
    out: dict[MentionKey, bool] = {}
    listed = 0
    for number, row in _numbered_records(path):
        listed = max(listed, len(row["predictions"]))
        if row["kind"] != "simple":
            continue
        key = mention_key(row)
        if key in out:
            raise InputFormatError(path, number, f"mention {key} is listed twice")
        out[key] = row["rank"] is not None and int(row["rank"]) <= k
    if not out:
        raise InputFormatError(
            path, None, "no simple (single-concept) mention: compare scores simple mentions only"
        )
    if listed < k:
        raise InputFormatError(
            path,
            None,
            f"lists the top {listed} candidates only; for acc@{k} re-run "
            f"'termnorm eval normalize ... -k {k} --predictions FILE'",
        )
    return out


def read_documents(path: str | Path) -> dict[MentionKey, str]:
    """``{mention key: document}`` for the simple mentions of one predictions file.

    The document is the record's ``doc_id`` where it has one, else the file the mention was
    read from (the file part of its ``location``).

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        InputFormatError: a line that is not a prediction record.
    """
    out: dict[MentionKey, str] = {}
    for row in read_records(path):
        if row["kind"] == "simple":
            key = mention_key(row)
            doc = row.get("doc_id")
            out[key] = str(doc) if doc not in (None, "") else key[1].rpartition(":")[0]
    return out
