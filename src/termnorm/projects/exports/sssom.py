"""SSSOM TSV: ``termnorm map export --format sssom``.

A YAML header with the curie map and mapping-set metadata, then one row per approved mapping:
``semapv:ManualMappingCuration`` for rows a reviewer approved,
``semapv:SemanticSimilarityThresholdMatching`` for auto-approved ones (their ``confidence`` is
the score they were approved at); the predicate ``skos:exactMatch``/``broadMatch``/
``narrowMatch``, ``author_id``, ``mapping_date``, labels. Source codes become CURIEs of the
project's prefix (``--subject-prefix``, default the project's name) under ``--base-uri``. An
OMOP concept (an index built by ``kg build --format omop``) is written as its vocabulary's
CURIE (``object_id`` ``SNOMEDCT:22298006``, ``LOINC:2160-0``) with OMOP's integer
``concept_id`` beside it in the column ``omop_concept_id``, a non-standard slot declared in the
header's ``extension_definitions`` (SSSOM's way of adding a column that validators accept).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from urllib.parse import quote

from termnorm.io.tables import atomic_file
from termnorm.projects.concepts import AttributeLookup
from termnorm.projects.exports.formats import SssomOptions
from termnorm.projects.exports.rows import (
    ExportJob,
    ExportRow,
    base_uri,
    is_mapped,
    iso_date,
    split_id,
)
from termnorm.projects.omop_targets import OmopTarget, is_omop, omop_target
from termnorm.projects.states import Predicate, RowState

__all__ = ["KNOWN_PREFIXES", "MANUAL", "OMOP_ID_SLOT", "SSSOM_COLUMNS", "THRESHOLD", "write_sssom"]

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
OMOP_ID_SLOT = "omop_concept_id"
"""SSSOM's extra column: the OMOP ``concept_id`` beside a vocabulary CURIE."""
_OMOP_ID_EXTENSION = (
    "# extension_definitions:\n"
    f"#   - slot_name: {OMOP_ID_SLOT}\n"
    "#     property: https://w3id.org/termnorm/vocab/omop_concept_id\n"
    "#     type_hint: http://www.w3.org/2001/XMLSchema#integer\n"
)


def _prefix_name(text: str) -> str:
    """``text`` as a CURIE prefix: letters, digits, ``_``; starting with a letter."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return name if name[:1].isalpha() else f"p_{name}"


def _omop_targets(rows: list[ExportRow], attributes: AttributeLookup) -> dict[str, OmopTarget]:
    """The :class:`OmopTarget` of every OMOP concept the rows' decisions name (each looked
    up once)."""
    targets: dict[str, OmopTarget] = {}
    for r in rows:
        cid = r.decision.concept_id if r.decision else None
        if cid and is_omop(cid) and cid not in targets:
            targets[cid] = omop_target(cid, r.code, attributes)
    return targets


def write_sssom(path: Path, job: ExportJob, options: SssomOptions) -> int:
    """Write the project's approved mappings to ``path`` as SSSOM TSV (module doc),
    atomically; return the mappings written."""
    project, base = job.name, base_uri(options.base_uri)
    prefix = _prefix_name(options.subject_prefix or project)
    calibrated = job.settings.calibrated
    measure = "termnorm combiner probability" if calibrated else "termnorm cosine similarity"
    mapped = [r for r in job.rows() if is_mapped(r)]
    omop = _omop_targets(mapped, job.attributes)
    objects = {cid: t.curie for cid, t in omop.items()}
    curie_map = {**_STANDARD, prefix: f"{base}{quote(project)}/codes/"}
    for r in mapped:
        cid = str(r.decision.concept_id)  # type: ignore[union-attr]
        namespace, _ = split_id(objects.get(cid, cid))
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
            namespace, local = split_id(objects.get(d.concept_id, d.concept_id))
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
                    iso_date(d.created_at),
                    score if auto else "",
                    score,
                    measure if score else "",
                    d.comment or "",
                    *extra,
                ]
            )
    return len(mapped)
