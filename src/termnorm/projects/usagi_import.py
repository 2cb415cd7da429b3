"""``termnorm map import-usagi``: an OHDSI Usagi mapping CSV (the layout of
:mod:`termnorm.projects.usagi`) moved into a project.

**Import** into an existing project (``map init`` it first from the code list, or from
the Usagi file itself: ``--code-column sourceCode --text-column sourceName``): every
``sourceCode`` must be a live row of the project (others are refused, listed with their
lines); rows of the project the file does not name are left alone. Per code, read in one
transaction (nothing is written when a line is refused):

* ``APPROVED`` → an approved decision of the concept (``EQUAL``, ``EQUIVALENT`` and the
  old files' ``UNREVIEWED`` exact, ``WIDER`` broad, ``NARROWER`` narrow; ``INEXACT`` has
  no termnorm predicate and is refused), or a no-match decision when ``conceptId`` is 0;
* ``AUTO_MAPPED`` / ``AUTO_MAPPED_TO_1`` → an auto-approved decision (nothing without a
  concept); ``FLAGGED`` → a flag; ``IGNORED`` (old Usagi) → no match;
* ``UNCHECKED`` → the row stays pending: a row still to map gets the concept as its one
  candidate (score ``matchScore``, source ``usagi``) and waits for review; a row that
  already has candidates keeps them; ``INVALID_TARGET`` → left as it is.

Each decision names ``statusSetBy`` (or ``default_reviewer`` when the file leaves it
empty; neither is refused naming the line) and keeps ``statusSetOn`` as its time;
``matchScore`` becomes its confidence; ``comment`` its comment. ``conceptId`` is resolved
through the project's index as a pick is (``OMOP:<conceptId>``,
:mod:`termnorm.projects.concepts`); an ID the index lacks is refused naming file and line.
A code with more than one target row (Usagi's ``MAPS_TO_VALUE`` / ``MAPS_TO_UNIT``) is
refused: a project maps a code to one concept.

A decision equal to the row's current one (same state, concept, predicate, reviewer and
comment) is not written again: the code counts as unchanged and the row keeps its version,
so importing a project's own export back is a no-op.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from termnorm.errors import DecisionError, InputFormatError
from termnorm.projects.concepts import ConceptResolver, project_concepts
from termnorm.projects.decisions import append_decision
from termnorm.projects.models import CandidateRow, DecisionRow, JsonReady, SourceRow, utcnow
from termnorm.projects.omop_targets import NAMESPACE
from termnorm.projects.settings import PipelineSettings
from termnorm.projects.states import Action, Predicate, RowState
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project
from termnorm.projects.usagi import PREDICATE_OF, Equivalence, MappingStatus

__all__ = ["UsagiImportReport", "UsagiLine", "import_usagi", "read_usagi"]

logger = logging.getLogger(__name__)

_REQUIRED = ("sourceCode", "matchScore", "mappingStatus", "conceptId")
_SUGGESTION_SOURCE = "usagi"


@dataclass(frozen=True)
class UsagiLine:
    """One code of a Usagi file, as read: the line its target is on, and its cells."""

    line: int
    code: str
    status: MappingStatus
    equivalence: Equivalence
    score: float
    concept: int
    reviewer: str
    at: datetime | None
    comment: str


@dataclass
class UsagiImportReport(JsonReady):
    """What :func:`import_usagi` did with the ``codes`` of ``file``: decisions written by
    kind, rows given Usagi's suggestion (``suggested``) and codes left as they were."""

    project: str
    file: str
    codes: int = 0
    approved: int = 0
    auto_approved: int = 0
    no_match: int = 0
    flagged: int = 0
    suggested: int = 0
    unchanged: int = 0
    reviewers: list[str] = field(default_factory=list)


def _enum(kind: type[Enum], value: str, path: Path, line: int, column: str) -> Any:
    try:
        return kind(value.strip())
    except ValueError:
        known = ", ".join(str(m.value) for m in kind)  # type: ignore[attr-defined]
        raise InputFormatError(path, line, f"{column} {value!r} is not one of {known}") from None


def _number(value: str, path: Path, line: int, column: str, kind: type) -> Any:
    """``value`` as ``kind``; a float may use a decimal comma (``0,87``), as spreadsheets
    that save with ``;`` write it."""
    text = value.strip()
    if kind is float and text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")
    try:
        return kind(text or 0)
    except ValueError:
        raise InputFormatError(path, line, f"{column} {value!r} is not a number") from None


def _parse(record: Mapping[str, str], path: Path, line: int) -> UsagiLine:
    get = lambda c: record.get(c) or ""  # noqa: E731  (an absent optional column reads empty)
    code = get("sourceCode").strip()
    if not code:
        raise InputFormatError(path, line, "empty sourceCode")
    millis = _number(get("statusSetOn"), path, line, "statusSetOn", int)
    return UsagiLine(
        line,
        code,
        _enum(MappingStatus, get("mappingStatus"), path, line, "mappingStatus"),
        _enum(Equivalence, get("equivalence") or "UNREVIEWED", path, line, "equivalence"),
        _number(get("matchScore"), path, line, "matchScore", float),
        _number(get("conceptId"), path, line, "conceptId", int),
        get("statusSetBy").strip(),
        datetime.fromtimestamp(millis / 1000, timezone.utc) if millis > 0 else None,
        get("comment"),
    )


_DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}


def _delimiter(header: str) -> str:
    """The delimiter of a Usagi file whose first line is ``header``: the one of comma,
    semicolon (European spreadsheets) and tab that splits it into the most required
    columns; comma when none finds any."""
    found = {
        d: len(set(next(csv.reader([header], delimiter=d), [])) & set(_REQUIRED))
        for d in _DELIMITERS
    }
    best = max(found, key=lambda d: found[d])
    return best if found[best] else ","


def read_usagi(path: str | Path) -> list[UsagiLine]:
    """The codes of a Usagi file, one :class:`UsagiLine` each (a code's rows merged: its
    target is the one non-zero ``conceptId``), in file order; the file may be saved with
    comma, semicolon or tab (found from its header);
    :class:`InputFormatError` naming file and line for a missing column, a bad cell or a code
    with more than one target concept."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Usagi file {path} does not exist")
    lines: dict[str, UsagiLine] = {}
    with path.open(encoding="utf-8-sig", newline="") as f:
        delimiter = _delimiter(f.readline())
        f.seek(0)
        reader = csv.DictReader(f, delimiter=delimiter)
        missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise InputFormatError(
                path,
                1,
                f"no column {', '.join(missing)} (header read with delimiter "
                f"{_DELIMITERS[delimiter]}): is this a Usagi mapping file?",
            )
        for record in reader:
            parsed = _parse(record, path, reader.line_num)
            first = lines.get(parsed.code)
            if first is None:
                lines[parsed.code] = parsed
            elif parsed.concept and first.concept and parsed.concept != first.concept:
                raise InputFormatError(
                    path,
                    parsed.line,
                    f"code {parsed.code!r} has a second target concept ({first.concept} on "
                    f"line {first.line}, {parsed.concept} here): a termnorm project maps a "
                    "code to one concept; keep one target row per code",
                )
            elif parsed.concept and not first.concept:
                lines[parsed.code] = parsed
    if not lines:
        raise InputFormatError(path, None, "has no data row")
    return list(lines.values())


def _reviewer(entry: UsagiLine, default: str | None, path: Path) -> str:
    who = entry.reviewer or (default or "").strip()
    if not who:
        raise InputFormatError(
            path,
            entry.line,
            f"code {entry.code!r} is {entry.status.value} with no statusSetBy: name who "
            "decided the rows that leave it empty (--default-reviewer NAME)",
        )
    return who


def _concept(
    entry: UsagiLine, concepts: ConceptResolver, path: Path
) -> tuple[str, str, float | None] | None:
    if not entry.concept:
        return None
    try:
        concept_id, name = concepts(f"{NAMESPACE}:{entry.concept}")
    except DecisionError as exc:
        raise InputFormatError(path, entry.line, f"conceptId {entry.concept}: {exc}") from None
    return concept_id, name, entry.score


def _predicate(entry: UsagiLine, path: Path) -> Predicate:
    predicate = PREDICATE_OF.get(entry.equivalence)
    if predicate is None:
        raise InputFormatError(
            path,
            entry.line,
            f"code {entry.code!r}: equivalence {entry.equivalence.value} has no termnorm "
            "predicate (exact, broad, narrow): mark it EQUAL, WIDER or NARROWER, or UNCHECKED",
        )
    return predicate


def _suggest(session: Session, row: SourceRow, concept: tuple[str, str, float | None]) -> bool:
    """Give a row still to map ``concept`` as its one candidate (to review); ``False`` when
    the row already has candidates (they stay)."""
    if row.state != RowState.TO_MAP.value:
        return False
    concept_id, name, score = concept
    session.add(
        CandidateRow(
            row_id=row.id,
            rank=1,
            concept_id=concept_id,
            name=name,
            matched_text=None,
            source=_SUGGESTION_SOURCE,
            term_source=None,
            score=float(score or 0.0),
        )
    )
    session.execute(
        update(SourceRow)
        .where(SourceRow.id == row.id, SourceRow.version == row.version)
        .values(state=RowState.TO_REVIEW.value, version=row.version + 1, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    session.expire(row)
    return True


def _decision(entry: UsagiLine, path: Path) -> tuple[Action, Predicate | None, bool]:
    """The action a decided ``entry`` records, its predicate, and whether it keeps the
    line's concept (a no match names none)."""
    status = entry.status
    if status is MappingStatus.APPROVED and entry.concept:
        return Action.PICK, _predicate(entry, path), True
    if status in (MappingStatus.APPROVED, MappingStatus.IGNORED):
        return Action.NO_MATCH, None, False
    if status is MappingStatus.FLAGGED:
        return Action.FLAG, None, True
    return Action.AUTO_APPROVE, _predicate(entry, path), True


def _is_current(
    session: Session,
    row: SourceRow,
    action: Action,
    concept: tuple[str, str, float | None] | None,
    predicate: Predicate | None,
    reviewer: str,
    comment: str | None,
) -> bool:
    """Whether the row's current decision already says what the import would write: the
    same state, concept, predicate, reviewer and comment (the time and the score, which a
    Usagi file rounds, do not count). Re-importing a file exported from the project is then
    a no-op, not a second copy of every decision."""
    current = session.get(DecisionRow, row.decision_id) if row.decision_id else None
    if current is None or action.state is None or row.state != action.state.value:
        return False
    return (current.concept_id, current.predicate, current.reviewer, current.comment) == (
        concept[0] if concept else None,
        predicate.value if predicate else None,
        reviewer,
        comment,
    )


_COUNTED = {
    Action.PICK: "approved",
    Action.NO_MATCH: "no_match",
    Action.FLAG: "flagged",
    Action.AUTO_APPROVE: "auto_approved",
}


def _apply(
    session: Session,
    row: SourceRow,
    entry: UsagiLine,
    concepts: ConceptResolver,
    default_reviewer: str | None,
    path: Path,
    report: UsagiImportReport,
) -> None:
    """Write what ``entry`` says about ``row`` (see the module) and count it in ``report``;
    a decision equal to the row's current one is counted unchanged and not written."""
    concept = _concept(entry, concepts, path)
    status = entry.status
    if status in (MappingStatus.UNCHECKED, MappingStatus.INVALID_TARGET) or (
        status in (MappingStatus.AUTO_MAPPED, MappingStatus.AUTO_MAPPED_TO_1) and not concept
    ):
        if status is MappingStatus.UNCHECKED and concept and _suggest(session, row, concept):
            report.suggested += 1
        else:
            report.unchanged += 1
        return
    reviewer = _reviewer(entry, default_reviewer, path)
    comment = entry.comment or None
    action, predicate, keeps = _decision(entry, path)
    concept = concept if keeps else None
    if _is_current(session, row, action, concept, predicate, reviewer, comment):
        report.unchanged += 1
        return
    counted = _COUNTED[action]
    setattr(report, counted, getattr(report, counted) + 1)
    append_decision(session, row, action, reviewer, concept, predicate, comment, entry.at)
    if reviewer not in report.reviewers:
        report.reviewers.append(reviewer)


def _project_rows(session: Session, project_id: int) -> dict[str, SourceRow]:
    query = select(SourceRow).where(
        SourceRow.project_id == project_id, SourceRow.retired.is_(False)
    )
    return {row.code: row for row in session.scalars(query)}


def import_usagi(
    project: str,
    file: str | Path,
    *,
    db: DatabaseLike = None,
    default_reviewer: str | None = None,
    concepts: ConceptResolver | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> UsagiImportReport:
    """Move the Usagi mapping ``file`` into the existing ``project`` (see the module), in one
    transaction. ``concepts``: the project's index as a resolver (default: read from the
    project's settings). :class:`InputFormatError` naming the file and line, and nothing
    written, for a line that cannot be imported; codes the project lacks are listed."""
    path = Path(file)
    entries = read_usagi(path)
    report = UsagiImportReport(project, str(path), len(entries))
    with open_project(project, db, write=True, busy_timeout=busy_timeout) as opened:
        _store, session, proj = opened
        resolve = concepts or project_concepts(PipelineSettings.from_row(proj).spec)
        rows = _project_rows(session, proj.id)
        unknown = [f"{e.code!r} (line {e.line})" for e in entries if e.code not in rows]
        if unknown:
            shown = ", ".join(unknown[:10]) + (
                f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
            )
            raise InputFormatError(
                path,
                None,
                f"{len(unknown)} sourceCode(s) are no live row of project {project!r}: {shown}; "
                f"map init the project from the same code list (or map apply it)",
            )
        for entry in entries:
            _apply(session, rows[entry.code], entry, resolve, default_reviewer, path, report)
    logger.info("%s: %d codes imported from %s", project, report.codes, path)
    return report
