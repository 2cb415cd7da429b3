"""A mapping project as a FHIR ConceptMap: ``termnorm map export --format fhir``.

One ``group`` per (source system, target system), in the order the rows first reach it; one
``element`` per exported row (its code and text), with one ``target`` (the concept's code
and name). The source system is ``source_system`` (``--source-system``; default
``urn:termnorm:project:<project>``); the target system comes from the concept ID's prefix
through :mod:`termnorm.kg.fhir_systems`, the table the ``fhir`` KG loader reads
(``SNOMEDCT:44054006`` → ``http://snomed.info/sct`` code ``44054006``), else
``<base URI>concepts/<prefix>``.

* **R4B** (the default; R4 reads it alike): ``target.equivalence`` from the predicate,
  read as R4 reads it, from target to source: ``skos:exactMatch`` → ``equivalent``,
  ``skos:broadMatch`` (the target is broader) → ``wider``, ``skos:narrowMatch`` →
  ``narrower``. A "no match" row is an element whose target says ``unmatched``, with no code.
* **R5**: ``target.relationship``: ``equivalent``, ``source-is-narrower-than-target``,
  ``source-is-broader-than-target``; a "no match" row is an element with ``noMap: true``.

The reviewer's comment is the target's ``comment``. A mapping to a narrower target carries
one in any case (FHIR's invariant cmd-1: such a map SHALL have comments): the reviewer's, or
one saying what the target leaves out. The reviewer (and, for an auto-approved row, the
score it was approved at) is data, not prose, so it is not put in the comment: R5 declares
``ConceptMap.property`` for such per-mapping facts, so the target carries properties
``reviewer``, ``decided`` and ``confidence``; R4B has no such element, so the target carries
the same facts as extensions (:data:`EXTENSION_BASE` + ``reviewer``, ``decided``,
``confidence``), FHIR's way to add data to a resource. An R5 ``noMap`` element has no
target, so its facts are extensions of the element.

Approved and auto-approved rows with a concept and "no match" rows are exported; open,
flagged and retired rows are not. The file is written atomically.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from termnorm.io.tables import atomic_file
from termnorm.kg.fhir_systems import FhirVersion, system_of_prefix
from termnorm.projects.exports.formats import FhirOptions
from termnorm.projects.exports.rows import ExportJob, ExportRow, base_uri, split_id, utc
from termnorm.projects.models import DecisionRow
from termnorm.projects.omop_targets import is_omop, omop_target
from termnorm.projects.states import Predicate, RowState

__all__ = [
    "EQUIVALENCE",
    "EXTENSION_BASE",
    "RELATIONSHIP",
    "default_source_system",
    "write_conceptmap",
]

EQUIVALENCE = {
    Predicate.EXACT: "equivalent",
    Predicate.BROAD: "wider",
    Predicate.NARROW: "narrower",
}
"""R4/R4B ``ConceptMapEquivalence`` of each predicate (read from target to source)."""
RELATIONSHIP = {
    Predicate.EXACT: "equivalent",
    Predicate.BROAD: "source-is-narrower-than-target",
    Predicate.NARROW: "source-is-broader-than-target",
}
"""R5 ``ConceptMapRelationship`` of each predicate."""
EXTENSION_BASE = "https://w3id.org/termnorm/fhir/StructureDefinition/mapping-"
"""URL stem of the extensions that carry a mapping's reviewer, date and confidence."""
PROPERTY_BASE = "https://w3id.org/termnorm/fhir/conceptmap-property/"
_PROPERTIES = (  # code, FHIR type, description
    ("reviewer", "string", "Who decided the mapping (for an auto-approved row: who ran it)."),
    ("decided", "dateTime", "When the decision was made."),
    ("confidence", "decimal", "The score an auto-approved mapping was approved at."),
)
_VALUE_KEY = {"string": "valueString", "dateTime": "valueDateTime", "decimal": "valueDecimal"}
_NARROWER_NOTE = "The source code is broader than the target concept (skos:narrowMatch)."
_EXPORTED = (RowState.APPROVED.value, RowState.AUTO_APPROVED.value)


def default_source_system(project: str) -> str:
    """The source system when none is given: a URN naming the project."""
    return f"urn:termnorm:project:{quote(project, safe='')}"


def _datetime(value: datetime) -> str:
    return utc(value).isoformat(timespec="seconds")


def _target_system(prefix: str, base: str) -> str:
    return system_of_prefix(prefix) or f"{base}concepts/{quote(prefix, safe='')}"


def _facts(decision: DecisionRow, auto: bool) -> list[tuple[str, str, Any]]:
    """``(code, FHIR type, value)`` of the decision's reviewer, date and (auto) confidence."""
    facts: list[tuple[str, str, Any]] = [
        ("reviewer", "string", decision.reviewer),
        ("decided", "dateTime", _datetime(decision.created_at)),
    ]
    if auto and decision.confidence is not None:
        facts.append(("confidence", "decimal", round(float(decision.confidence), 6)))
    return facts


def _extensions(facts: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    return [{"url": EXTENSION_BASE + code, _VALUE_KEY[kind]: v} for code, kind, v in facts]


def _properties(facts: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    return [{"code": code, _VALUE_KEY[kind]: v} for code, kind, v in facts]


TargetId = Callable[[str, str], str]
"""``target_id(concept_id, code)``: the ID the ConceptMap names for the concept decided for
source ``code`` (the exports pass an OMOP concept's vocabulary CURIE, ``SNOMEDCT:22298006``,
so its target is SNOMED CT's system and code rather than OMOP's number)."""


def _element(
    row: ExportRow, version: FhirVersion, base: str, target_id: TargetId | None = None
) -> tuple[str | None, dict[str, Any]]:
    """The row's target system (``None`` for no match) and its ``element``."""
    decision = row.decision
    assert decision is not None
    element: dict[str, Any] = {"code": row.code, "display": row.text}
    facts = _facts(decision, row.state == RowState.AUTO_APPROVED.value)
    if row.state == RowState.NO_MATCH.value:
        target: dict[str, Any] = {}
        if version is FhirVersion.R5:
            element.update(noMap=True, extension=_extensions(facts))
            return None, element
        target = {"equivalence": "unmatched", "extension": _extensions(facts)}
        if decision.comment:
            target["comment"] = decision.comment
        element["target"] = [target]
        return None, element
    assert decision.concept_id is not None
    concept_id = target_id(decision.concept_id, row.code) if target_id else decision.concept_id
    prefix, local = split_id(concept_id)
    predicate = Predicate(decision.predicate or Predicate.EXACT.value)
    target = {"code": local}
    if decision.concept_name:
        target["display"] = decision.concept_name
    if version is FhirVersion.R5:
        target["relationship"] = RELATIONSHIP[predicate]
        target["property"] = _properties(facts)
    else:
        target["equivalence"] = EQUIVALENCE[predicate]
        target["extension"] = _extensions(facts)
    comment = decision.comment or (_NARROWER_NOTE if predicate is Predicate.NARROW else "")
    if comment:
        target["comment"] = comment
    element["target"] = [target]
    return _target_system(prefix, base), element


def _name(project: str) -> str:
    """A computable name (FHIR's ``[A-Z]([A-Za-z0-9_]){0,254}``) for the project."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", project)
    name = name[:1].upper() + name[1:] if name[:1].isalpha() else f"P{name}"
    return f"{name}Mappings"[:255]


def conceptmap(
    rows: Iterable[ExportRow],
    project: str,
    version: FhirVersion,
    source_system: str,
    base: str,
    target_id: TargetId | None = None,
) -> tuple[dict[str, Any], int]:
    """The ConceptMap of ``rows`` (module docstring) and how many elements it holds;
    ``target_id`` rewrites a decided concept ID into the one the map names (:data:`TargetId`)."""
    if version is FhirVersion.R4:
        version = FhirVersion.R4B
    groups: dict[str | None, list[dict[str, Any]]] = {}
    count = 0
    for row in rows:
        d = row.decision
        if d is None or not (
            row.state == RowState.NO_MATCH.value or (row.state in _EXPORTED and d.concept_id)
        ):
            continue
        system, element = _element(row, version, base, target_id)
        groups.setdefault(system, []).append(element)
        count += 1
    resource: dict[str, Any] = {
        "resourceType": "ConceptMap",
        "url": f"{base}{quote(project, safe='')}/conceptmap",
        "name": _name(project),
        "title": f"termnorm mapping project {project}",
        "status": "draft",
        "date": _datetime(datetime.now(timezone.utc)),
        "description": f"The decisions of termnorm mapping project {project} ({version.value}).",
    }
    if version is FhirVersion.R5:
        resource["property"] = [
            {"code": code, "uri": PROPERTY_BASE + code, "description": text, "type": kind}
            for code, kind, text in _PROPERTIES
        ]
    resource["group"] = [
        {"source": source_system, **({"target": system} if system else {}), "element": elements}
        for system, elements in groups.items()
    ]
    return resource, count


def write_conceptmap(path: Path, job: ExportJob, options: FhirOptions) -> int:
    """Write the project's ConceptMap (module doc) to ``path`` as JSON, atomically; return its
    number of elements. An OMOP concept is named by its vocabulary's code (SNOMED CT's or
    LOINC's own), any other concept by its ID."""
    project, version = job.name, FhirVersion(options.fhir_version)
    system = options.source_system or default_source_system(project)

    def target_id(concept_id: str, code: str) -> str:
        if not is_omop(concept_id):
            return concept_id
        return omop_target(concept_id, code, job.attributes).curie

    base = base_uri(options.base_uri)
    resource, count = conceptmap(job.rows(), project, version, system, base, target_id)
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8") as f:
        json.dump(resource, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return count
