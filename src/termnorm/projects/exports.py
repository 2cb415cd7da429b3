"""``termnorm map export``: a project's decisions in the field's formats.

* ``sssom``: SSSOM TSV (a YAML header with the curie map and mapping-set metadata, then one
  row per approved mapping): ``semapv:ManualMappingCuration`` for rows a reviewer approved,
  ``semapv:SemanticSimilarityThresholdMatching`` for auto-approved ones (their
  ``confidence`` is the score they were approved at); the predicate
  ``skos:exactMatch``/``broadMatch``/``narrowMatch``, ``author_id``, ``mapping_date``, labels.
  Source codes become CURIEs of the project's prefix (``--subject-prefix``, default the
  project's name) under ``--base-uri``. An OMOP concept (an index built by ``kg build
  --format omop``) is written as its vocabulary's CURIE (``object_id`` ``SNOMEDCT:22298006``,
  ``LOINC:2160-0``) with OMOP's integer ``concept_id`` beside it in the column
  ``omop_concept_id``, a non-standard slot declared in the header's
  ``extension_definitions`` (SSSOM's way of adding a column that validators accept).
* ``omop``: OMOP CDM ``source_to_concept_map`` CSV (its columns, in order): approved rows
  with their concept's integer ID and the concept's ``vocabulary_id`` as the project's index
  holds it, "no match" rows with concept 0 (vocabulary ``None``), as OMOP marks unmapped
  codes. A concept that is not an OMOP concept (its ID's local part not an integer, or no
  ``vocabulary_id`` in the index) is refused naming it (:mod:`termnorm.projects.omop_targets`).
* ``usagi``: OHDSI Usagi's mapping CSV (:mod:`termnorm.projects.usagi`), which
  ``termnorm map import-usagi`` reads back.
* ``csv``: every live row with its state, decision and top candidate.
* ``fhir``: a FHIR ConceptMap, R4B or R5 (:mod:`termnorm.projects.export_fhir`).
* ``synonyms``: the approved exact mappings as a ``concept_id<TAB>text`` file
  (``--synonyms`` of ``normalize`` and of another project reads it).

Retired rows are never exported. Files are written atomically (all or nothing).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from sqlalchemy.orm import Session

from termnorm.io.tables import atomic_file
from termnorm.kg.fhir_systems import FhirVersion
from termnorm.projects.concepts import AttributeLookup, project_attributes
from termnorm.projects.decisions import learned_synonyms
from termnorm.projects.export_fhir import write_conceptmap
from termnorm.projects.models import CandidateRow, DecisionRow, JsonReady
from termnorm.projects.omop_targets import OmopTarget, check_integer, is_omop, omop_target
from termnorm.projects.rows import live_rows_select
from termnorm.projects.settings import PipelineSettings
from termnorm.projects.states import ExportFormat, Predicate, RowState
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project
from termnorm.projects.usagi import write_usagi

__all__ = ["DEFAULT_BASE_URI", "OMOP_COLUMNS", "ExportReport", "export"]

DEFAULT_BASE_URI = "https://w3id.org/termnorm/projects/"
OMOP_COLUMNS = (
    "source_code", "source_concept_id", "source_vocabulary_id", "source_code_description",
    "target_concept_id", "target_vocabulary_id", "valid_start_date", "valid_end_date",
    "invalid_reason",
)  # fmt: skip
CSV_COLUMNS = (
    "code", "text", "frequency", "state", "version", "concept_id", "concept_name", "predicate",
    "action", "reviewer", "decided_at", "confidence", "comment", "top_concept_id",
    "top_concept_name", "top_score", "map_error",
)  # fmt: skip
SSSOM_COLUMNS = (
    "subject_id", "subject_label", "predicate_id", "object_id", "object_label",
    "mapping_justification", "author_id", "mapping_date", "confidence", "similarity_score",
    "similarity_measure", "comment",
)  # fmt: skip
MANUAL = "semapv:ManualMappingCuration"
THRESHOLD = "semapv:SemanticSimilarityThresholdMatching"
KNOWN_PREFIXES = {
    "HP": "http://purl.obolibrary.org/obo/HP_",
    "MONDO": "http://purl.obolibrary.org/obo/MONDO_",
    "DOID": "http://purl.obolibrary.org/obo/DOID_",
    "MESH": "http://id.nlm.nih.gov/mesh/",
    "OMIM": "https://omim.org/entry/",
    "ICD10CM": "http://purl.bioontology.org/ontology/ICD10CM/",
    "ICD10": "http://purl.bioontology.org/ontology/ICD10/",
    "SNOMEDCT": "http://snomed.info/id/",
    "UMLS": "https://uts.nlm.nih.gov/uts/umls/concept/",
    "LOINC": "https://loinc.org/",
    "RxNorm": "http://purl.bioontology.org/ontology/RXNORM/",
}
"""Expansions of the concept namespaces termnorm's loaders write; others get one under the
base URI (``.../concepts/NS/``)."""
_STANDARD = {
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "semapv": "https://w3id.org/semapv/vocab/",
    "reviewer": "https://w3id.org/termnorm/reviewers/",
}
_FAR_FUTURE = "2099-12-31"
OMOP_ID_SLOT = "omop_concept_id"
"""SSSOM's extra column: the OMOP ``concept_id`` beside a vocabulary CURIE."""
_OMOP_ID_EXTENSION = (
    "# extension_definitions:\n"
    f"#   - slot_name: {OMOP_ID_SLOT}\n"
    "#     property: https://w3id.org/termnorm/vocab/omop_concept_id\n"
    "#     type_hint: http://www.w3.org/2001/XMLSchema#integer\n"
)


@dataclass(frozen=True)
class ExportReport(JsonReady):
    """What :func:`export` wrote: ``rows`` in ``format`` to ``out``."""

    format: str
    out: str
    rows: int


@dataclass(frozen=True)
class _Row:
    code: str
    text: str
    frequency: float | None
    state: str
    version: int
    map_error: str | None
    decision: DecisionRow | None
    top: CandidateRow | None


def _rows(session: Session, project_id: int) -> Iterator[_Row]:
    """Every live row with its current decision and top candidate, in row order."""
    for row, decision, best in session.execute(live_rows_select(project_id)).yield_per(2000):
        yield _Row(
            row.code,
            row.text,
            row.frequency,
            row.state,
            row.version,
            row.map_error,
            decision,
            best,
        )


def _date(value: datetime) -> str:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    return aware.astimezone(timezone.utc).date().isoformat()


def _prefix_name(text: str) -> str:
    """``text`` as a CURIE prefix: letters, digits, ``_``; starting with a letter."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return name if name[:1].isalpha() else f"p_{name}"


def _split(concept_id: str) -> tuple[str, str]:
    namespace, sep, local = concept_id.partition(":")
    return (namespace, local) if sep and namespace else ("CONCEPT", concept_id)


def _omop_targets(rows: list[_Row], attributes: AttributeLookup) -> dict[str, OmopTarget]:
    """The :class:`OmopTarget` of every OMOP concept the rows' decisions name (each looked
    up once)."""
    targets: dict[str, OmopTarget] = {}
    for r in rows:
        cid = r.decision.concept_id if r.decision else None
        if cid and is_omop(cid) and cid not in targets:
            targets[cid] = omop_target(cid, r.code, attributes)
    return targets


def _write_sssom(
    path: Path,
    rows: list[_Row],
    project: str,
    prefix: str,
    base: str,
    measure: str,
    attributes: AttributeLookup,
) -> int:
    mapped = [
        r
        for r in rows
        if r.decision is not None
        and r.decision.concept_id
        and r.state in (RowState.APPROVED.value, RowState.AUTO_APPROVED.value)
    ]
    omop = _omop_targets(mapped, attributes)
    objects = {cid: t.curie for cid, t in omop.items()}
    curie_map = {**_STANDARD, prefix: f"{base}{quote(project)}/codes/"}
    for r in mapped:
        cid = str(r.decision.concept_id)  # type: ignore[union-attr]
        namespace, _ = _split(objects.get(cid, cid))
        curie_map.setdefault(
            namespace, KNOWN_PREFIXES.get(namespace, f"{base}concepts/{namespace}/")
        )
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        f.write("# curie_map:\n")
        f.writelines(f"#   {name}: {uri}\n" for name, uri in curie_map.items())
        f.write(f"# mapping_set_id: {base}{quote(project)}/sssom.tsv\n")
        f.write(f"# mapping_set_title: termnorm mapping project {project}\n")
        f.write("# license: https://creativecommons.org/publicdomain/zero/1.0/\n")
        f.write("# mapping_tool: termnorm\n")
        if omop:
            f.write(_OMOP_ID_EXTENSION)
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow([*SSSOM_COLUMNS, *([OMOP_ID_SLOT] if omop else [])])
        for r in mapped:
            d = r.decision
            assert d is not None and d.concept_id is not None  # filtered above
            auto = r.state == RowState.AUTO_APPROVED.value
            namespace, local = _split(objects.get(d.concept_id, d.concept_id))
            score = "" if d.confidence is None else f"{d.confidence:.6f}"
            target = omop.get(d.concept_id)
            extra = [str(target.concept_id) if target else ""] if omop else []
            writer.writerow(
                [
                    f"{prefix}:{quote(r.code, safe='')}",
                    r.text,
                    Predicate(d.predicate or Predicate.EXACT.value).skos,
                    f"{namespace}:{local}",
                    d.concept_name or "",
                    THRESHOLD if auto else MANUAL,
                    f"reviewer:{quote(d.reviewer, safe='')}",
                    _date(d.created_at),
                    score if auto else "",
                    score,
                    measure if score else "",
                    d.comment or "",
                    *extra,
                ]
            )
    return len(mapped)


def _mapped(r: _Row) -> bool:
    """Whether ``r`` is an approved (or auto-approved) row with a concept."""
    approved = (RowState.APPROVED.value, RowState.AUTO_APPROVED.value)
    return r.state in approved and r.decision is not None and bool(r.decision.concept_id)


def _write_omop(path: Path, rows: list[_Row], vocabulary: str, attributes: AttributeLookup) -> int:
    for r in rows:  # every ID an integer before the index is read
        if _mapped(r):
            check_integer(str(r.decision.concept_id), r.code)  # type: ignore[union-attr]
    written, targets = 0, dict[str, OmopTarget]()
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(OMOP_COLUMNS)
        for r in rows:
            d = r.decision
            if r.state == RowState.NO_MATCH.value and d is not None:
                target, target_vocabulary = 0, "None"
            elif _mapped(r) and d and d.concept_id:
                if d.concept_id not in targets:
                    targets[d.concept_id] = omop_target(d.concept_id, r.code, attributes)
                found = targets[d.concept_id]
                target, target_vocabulary = found.concept_id, found.vocabulary_id
            else:
                continue
            writer.writerow(
                [
                    r.code,
                    0,
                    vocabulary,
                    r.text,
                    target,
                    target_vocabulary,
                    _date(d.created_at),
                    _FAR_FUTURE,
                    "",
                ]
            )
            written += 1
    return written


def _vocabulary_id(attributes: AttributeLookup) -> Callable[[str, str], str]:
    """``(concept_id, code) ->`` an OMOP concept's vocabulary CURIE (``SNOMEDCT:22298006``),
    any other concept ID as it is: a FHIR ConceptMap names SNOMED CT's or LOINC's own codes."""

    def target(concept_id: str, code: str) -> str:
        return (
            omop_target(concept_id, code, attributes).curie if is_omop(concept_id) else concept_id
        )

    return target


def _write_csv(path: Path, rows: list[_Row]) -> int:
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        for r in rows:
            d, t = r.decision, r.top
            writer.writerow(
                [
                    r.code,
                    r.text,
                    "" if r.frequency is None else f"{r.frequency:g}",
                    r.state,
                    r.version,
                    d.concept_id if d else "",
                    (d.concept_name or "") if d else "",
                    (d.predicate or "") if d else "",
                    d.action if d else "",
                    d.reviewer if d else "",
                    d.created_at.isoformat() if d else "",
                    "" if d is None or d.confidence is None else f"{d.confidence:.6f}",
                    (d.comment or "") if d else "",
                    t.concept_id if t else "",
                    t.name if t else "",
                    f"{t.score:.6f}" if t else "",
                    r.map_error or "",
                ]
            )
    return len(rows)


def _write_synonyms(path: Path, pairs: list[tuple[str, str]]) -> int:
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        f.writelines(f"{cid}\t{' '.join(text.split())}\n" for cid, text in pairs)
    return len(pairs)


def export(
    project: str,
    format: ExportFormat | str,
    out: str | Path,
    *,
    db: DatabaseLike = None,
    subject_prefix: str | None = None,
    base_uri: str = DEFAULT_BASE_URI,
    vocabulary_id: str | None = None,
    concepts: AttributeLookup | None = None,
    fhir_version: FhirVersion | str = FhirVersion.R4B,
    source_system: str | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> ExportReport:
    """Write ``project``'s mappings to ``out`` in ``format`` (see the module).
    ``subject_prefix`` / ``base_uri``: the CURIE prefix and URI base of the source codes
    (SSSOM); ``vocabulary_id``: OMOP's ``source_vocabulary_id`` (default the project's
    name, at most 20 characters); ``concepts``: the concepts' attributes (default: read
    from the project's index, once, when an OMOP concept is to be written);
    ``fhir_version`` / ``source_system``: the ConceptMap's release (R4B or R5) and the
    system of the source codes (default a URN naming the project)."""
    fmt = ExportFormat(format)
    version = FhirVersion(fhir_version)
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"--out {path} is a folder; give a file, e.g. {path / (project + '.tsv')}")
    base = base_uri if base_uri.endswith(("/", "#")) else base_uri + "/"
    with open_project(project, db, busy_timeout=busy_timeout) as (_store, session, proj):
        if fmt is ExportFormat.SYNONYMS:
            count = _write_synonyms(path, learned_synonyms(session, proj.id))
            return ExportReport(fmt.value, str(path), count)
        settings = PipelineSettings.from_row(proj)
        attributes = concepts or project_attributes(settings.spec)
        if fmt is ExportFormat.USAGI:
            count = write_usagi(path, session, proj.id, attributes)
            return ExportReport(fmt.value, str(path), count)
        rows = list(_rows(session, proj.id))
    if fmt is ExportFormat.SSSOM:
        calibrated = settings.calibrated
        measure = "termnorm combiner probability" if calibrated else "termnorm cosine similarity"
        prefix = _prefix_name(subject_prefix or project)
        count = _write_sssom(path, rows, project, prefix, base, measure, attributes)
    elif fmt is ExportFormat.FHIR:
        count = write_conceptmap(
            path, rows, project, version, source_system, base, _vocabulary_id(attributes)
        )
    elif fmt is ExportFormat.OMOP:
        vocabulary = (vocabulary_id or project)[:20]
        count = _write_omop(path, rows, vocabulary, attributes)
    else:
        count = _write_csv(path, rows)
    return ExportReport(fmt.value, str(path), count)
