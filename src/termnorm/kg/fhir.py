"""FHIR CodeSystems → records: ``termnorm kg build --format fhir``.

The source is a JSON file holding one CodeSystem or a Bundle of CodeSystems, an NDJSON file
(``.ndjson``, ``.jsonl``; ``.gz`` read on the fly) holding one such resource per line, or a
folder of such files. Each CodeSystem is validated with the ``fhir.resources`` model of its
FHIR release (extra ``fhir``; ``validate`` false skips it, concepts without a code then
dropped and counted): ``fhir_version`` when given, else the version in a ``meta.profile`` canonical (``…|4.0.1`` R4, ``|4.3.0`` R4B, ``|5.0.0`` R5), else R5 when the
resource has a field only R5 defines (``versionAlgorithm[x]``, ``copyrightLabel``, ``author``,
…), else R4. R4 is checked with the R4B models (``fhir.resources`` ships no R4 package; R4B
changed neither CodeSystem nor its data types). Any other resource is refused naming the
file, the line (NDJSON) and the ``resourceType`` found.

* **Concepts** ``PREFIX:code``: the prefix comes from the CodeSystem's ``url`` for the systems
  :mod:`termnorm.kg.fhir_systems` knows (``http://snomed.info/sct`` → ``SNOMEDCT``), else from
  ``prefix`` (``--prefix``); without either the build stops and says so. Attributes: the
  concept's ``definition`` and each of its properties other than parent/child, by property
  code (several values joined by ``; ``; a Coding by its code).
* **Terms**: the ``display`` (preferred), then each ``designation`` with its ``language``
  (else the CodeSystem's ``language``, else ``default_language``) and its ``use`` in the
  source: ``fhir:display``, ``fhir:designation:<use.code or use.display>``,
  ``fhir:designation`` without a use.
* **Hierarchy**: a concept nested in another's ``concept`` list, and the properties whose
  meaning is ``parent`` or ``child`` (by the CodeSystem's ``property.uri``
  ``http://hl7.org/fhir/concept-properties#parent``, else by code), become ``child is_a
  parent`` relations; those with an endpoint that is not a kept concept are dropped, counted.
* **Inactive concepts** (property ``status`` = ``retired``, property ``inactive`` = true) are
  dropped and counted, or kept with ``include_inactive``.
* **Count**: a CodeSystem whose ``content`` is ``complete`` and whose ``count`` differs from
  the concepts it holds (nested ones included) is warned about: a list cut short.

The record stream is stream-safe (:mod:`termnorm.kg.stream`): each concept once, followed by
its terms, then the relations between emitted concepts, without repeats.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termnorm.errors import InputFormatError, MissingExtraError
from termnorm.kg._text import Record, decoded_lines, dedup_terms, iter_lines
from termnorm.kg.fhir_systems import FhirVersion, prefix_of_system
from termnorm.kg.options import FhirOptions
from termnorm.kg.records import Concept, LoadReport, Relation, Term

__all__ = ["FhirOptions", "codesystem_version", "load_fhir"]

logger = logging.getLogger(__name__)

IS_A = "is_a"
PROPERTY_URI = "http://hl7.org/fhir/concept-properties#"
NDJSON_SUFFIXES = (".ndjson", ".jsonl")
R5_ONLY_FIELDS = frozenset(
    {
        "versionAlgorithmString", "versionAlgorithmCoding", "copyrightLabel", "approvalDate",
        "lastReviewDate", "effectivePeriod", "topic", "author", "editor", "reviewer",
        "endorser", "relatedArtifact",
    }
)  # fmt: skip
"""CodeSystem fields that R5 added: their presence marks an R5 resource."""
_PROFILE_VERSIONS = {"4.0": FhirVersion.R4, "4.3": FhirVersion.R4B, "5.0": FhirVersion.R5}
_HIERARCHY = ("parent", "child")


@dataclass(frozen=True)
class _Where:
    """Where a resource was read: the file and, in NDJSON, the line."""

    path: Path
    line: int | None

    def error(self, message: str) -> InputFormatError:
        return InputFormatError(self.path, self.line, message)


def _files(path: Path) -> list[Path]:
    """The files of the source: ``path`` itself, or a folder's ``.json``/``.ndjson`` files."""
    if not path.is_dir():
        return [path]
    files = sorted(
        p
        for p in path.iterdir()
        if p.is_file() and p.name.removesuffix(".gz").endswith((".json", *NDJSON_SUFFIXES))
    )
    if not files:
        raise InputFormatError(path, None, "no .json or .ndjson file in this folder")
    return files


def _resources(path: Path) -> Iterator[tuple[_Where, Any]]:
    """Each top-level resource of one file, with where it was read."""
    if path.name.removesuffix(".gz").endswith(NDJSON_SUFFIXES):
        for number, text in iter_lines(path):
            if text.strip():
                where = _Where(path, number)
                yield where, _parse(text, where, ndjson=True)
        return
    text = "".join(decoded_lines(path))
    resource = _parse(text, _Where(path, None), ndjson=False)
    del text  # the file's text is not held while its concepts are read
    yield _Where(path, None), resource


def _parse(text: str, where: _Where, ndjson: bool) -> Any:
    """The JSON value of ``text``; malformed JSON is an error at its line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if not ndjson and exc.msg == "Extra data":
            hint = " (several resources, one per line? name the file .ndjson)"
        line = where.line if ndjson else exc.lineno
        raise InputFormatError(
            where.path, line, f"not JSON: {exc.msg} at column {exc.colno}{hint}"
        ) from None


def _codesystems(resource: Any, where: _Where, report: LoadReport) -> Iterator[dict[str, Any]]:
    """The CodeSystems of one resource: itself, or a Bundle's entries; anything else refused."""
    kind = resource.get("resourceType") if isinstance(resource, dict) else None
    if kind == "CodeSystem":
        report.read["CodeSystem resources"] += 1
        yield resource
        return
    if kind == "Bundle":
        report.read["Bundle resources"] += 1
        for number, entry in enumerate(resource.get("entry") or [], start=1):
            inner = entry.get("resource") if isinstance(entry, dict) else None
            found = inner.get("resourceType") if isinstance(inner, dict) else None
            if found != "CodeSystem" or not isinstance(inner, dict):
                raise where.error(
                    f"Bundle entry {number} holds a {found or 'non-resource'} resource, not a "
                    "CodeSystem: give a Bundle of CodeSystems only"
                )
            report.read["CodeSystem resources"] += 1
            yield inner
        return
    found = f"resourceType {kind!r}" if kind else "no resourceType"
    raise where.error(
        f"found {found}, not a CodeSystem: give a FHIR CodeSystem (JSON), a Bundle of "
        "CodeSystems, or an NDJSON file with one per line"
    )


def codesystem_version(resource: dict[str, Any], given: FhirVersion | None) -> FhirVersion:
    """The FHIR release of a CodeSystem (module docstring): ``given``, else ``meta.profile``,
    else R5 when an R5-only field is present, else R4."""
    if given is not None:
        return given
    for profile in (resource.get("meta") or {}).get("profile") or []:
        version = str(profile).partition("|")[2]
        if version[:3] in _PROFILE_VERSIONS:
            return _PROFILE_VERSIONS[version[:3]]
    return FhirVersion.R5 if R5_ONLY_FIELDS & resource.keys() else FhirVersion.R4


def _model(version: FhirVersion) -> Any:
    """The ``fhir.resources`` CodeSystem model of ``version`` (R4 → R4B)."""
    package = "fhir.resources" if version is FhirVersion.R5 else "fhir.resources.R4B"
    try:
        module = importlib.import_module(f"{package}.codesystem")
    except ImportError as exc:
        raise MissingExtraError("fhir.resources", "fhir") from exc
    return module.CodeSystem


def _validate(resource: dict[str, Any], version: FhirVersion, where: _Where) -> None:
    """Check ``resource`` against the CodeSystem model of ``version``; an invalid one is an
    error naming the file (and line) with pydantic's messages."""
    from pydantic import ValidationError

    try:
        _model(version).model_validate(resource)
    except ValidationError as exc:
        errors = exc.errors()
        shown = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'CodeSystem'}: {e['msg']}" for e in errors[:3]
        )
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        label = resource.get("url") or resource.get("id") or "without url"
        raise where.error(
            f"CodeSystem {label} is not a valid FHIR {version.value} CodeSystem: {shown}{more} "
            "(give --fhir-version if it is another release)"
        ) from None


def _prefix(resource: dict[str, Any], options: FhirOptions, where: _Where) -> str:
    """The namespace of the CodeSystem's concept IDs: its known url's, else ``prefix``."""
    url = str(resource.get("url") or "")
    known = prefix_of_system(url) if url else None
    if known:
        return known
    if options.prefix:
        return options.prefix
    what = f"url {url!r} is not a code system termnorm knows" if url else "has no url"
    raise where.error(
        f"CodeSystem {what}: give the namespace of its concept IDs with --prefix (e.g. "
        "--prefix LOCAL)"
    )


def _value(prop: dict[str, Any]) -> str:
    """A concept property's value as text (a Coding by its code, a boolean as true/false)."""
    for key, value in prop.items():
        if not key.startswith("value"):
            continue
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, dict):
            return str(value.get("code") or json.dumps(value, sort_keys=True))
        return str(value)
    return ""


def _meanings(resource: dict[str, Any]) -> dict[str, str]:
    """Property code → its meaning: the FHIR concept-property it declares by ``uri``, else
    its code."""
    out = {}
    for prop in resource.get("property") or []:
        uri, code = str(prop.get("uri") or ""), str(prop.get("code") or "")
        out[code] = uri[len(PROPERTY_URI) :] if uri.startswith(PROPERTY_URI) else code
    return out


def _inactive(meaning: str, value: str) -> str | None:
    """Why a property marks its concept inactive (``None``: it does not)."""
    if meaning == "status" and value.lower() == "retired":
        return "concept: status retired"
    if meaning == "inactive" and value == "true":
        return "concept: inactive"
    return None


@dataclass
class _Concept:
    """What one CodeSystem concept says, before it is kept or dropped."""

    attributes: list[tuple[str, str]]
    parents: list[str]
    children: list[str]
    inactive: str | None


def _read_concept(concept: dict[str, Any], meanings: dict[str, str]) -> _Concept:
    """A concept's properties sorted into attributes, hierarchy and inactivity."""
    values: dict[str, list[str]] = {}
    parents: list[str] = []
    children: list[str] = []
    inactive = None
    for prop in concept.get("property") or []:
        code = str(prop.get("code") or "")
        meaning, value = meanings.get(code, code), _value(prop)
        if meaning in _HIERARCHY:
            (parents if meaning == "parent" else children).append(value)
            continue
        inactive = inactive or _inactive(meaning, value)
        values.setdefault(code, []).append(value)
    attributes = [("definition", str(concept["definition"]))] if concept.get("definition") else []
    attributes += [(key, "; ".join(found)) for key, found in values.items()]
    return _Concept(attributes, parents, children, inactive)


def _terms(concept_id: str, concept: dict[str, Any], lang: str, report: LoadReport) -> list[Term]:
    """The display (preferred), then the designations with their language and use."""
    items = [(str(concept.get("display") or ""), lang, "fhir:display")]
    for designation in concept.get("designation") or []:
        use = designation.get("use") or {}
        kind = use.get("code") or use.get("display")
        source = f"fhir:designation:{kind}" if kind else "fhir:designation"
        items.append(
            (str(designation.get("value") or ""), designation.get("language") or lang, source)
        )
    if not items[0][0]:
        items = items[1:]
    return dedup_terms(concept_id, items, report)


@dataclass
class _State:
    """What the load has emitted so far (across every CodeSystem of the source)."""

    emitted: set[str]
    edges: list[tuple[str, str]]


def _records(
    resource: dict[str, Any], prefix: str, options: FhirOptions, state: _State, report: LoadReport
) -> Iterator[Record]:
    """The kept concepts of one CodeSystem, each followed by its terms; its ``is_a`` edges
    are collected into ``state`` (emitted once every CodeSystem is read)."""
    meanings = _meanings(resource)
    lang = str(resource.get("language") or options.default_language)
    stack: list[tuple[dict[str, Any], str | None]] = [
        (c, None) for c in reversed(resource.get("concept") or [])
    ]
    while stack:
        concept, parent = stack.pop()
        code = str(concept.get("code") or "")
        stack.extend((child, code) for child in reversed(concept.get("concept") or []))
        report.read["concepts"] += 1
        if not code:
            report.drop("concept: no code")
            continue
        cid = f"{prefix}:{code}"
        read = _read_concept(concept, meanings)
        state.edges += [(cid, f"{prefix}:{p}") for p in ([parent] if parent else []) + read.parents]
        state.edges += [(f"{prefix}:{child}", cid) for child in read.children]
        if read.inactive and not options.include_inactive:
            report.drop(read.inactive)
            continue
        if cid in state.emitted:
            report.drop("concept: duplicate code")
            continue
        terms = _terms(cid, concept, lang, report)
        if not terms:
            report.drop("concept: no display and no designation")
            continue
        state.emitted.add(cid)
        report.keep("concepts")
        yield Concept(cid, terms[0].term, attributes=tuple(read.attributes))
        yield from terms


def _relations(state: _State, report: LoadReport) -> Iterator[Relation]:
    """The ``is_a`` edges between emitted concepts, each once; the others counted."""
    seen: set[tuple[str, str]] = set()
    for child, parent in state.edges:
        if child == parent:
            report.drop("relation is_a: to itself")
        elif child not in state.emitted or parent not in state.emitted:
            report.drop("relation is_a: endpoint not a kept concept")
        elif (child, parent) in seen:
            report.drop("relation is_a: duplicate")
        else:
            seen.add((child, parent))
            report.keep("relations")
            yield Relation(child, IS_A, parent)


def load_fhir(
    path: Path, report: LoadReport, options: FhirOptions | None = None
) -> Iterator[Record]:
    """Yield the kept concepts of the CodeSystems in ``path`` (a file or a folder of files),
    each followed by its terms, then the ``is_a`` relations between them (module docstring)."""
    options = options or FhirOptions()
    state = _State(set(), [])
    for file in _files(Path(path)):
        for where, resource in _resources(file):
            for codesystem in _codesystems(resource, where, report):
                version = codesystem_version(codesystem, options.fhir_version)
                if options.validate:
                    _validate(codesystem, version, where)
                prefix = _prefix(codesystem, options, where)
                label = codesystem.get("url") or codesystem.get("id") or "(no url)"
                report.info[f"CodeSystem {label}"] = (
                    f"FHIR {version.value}{'' if options.validate else ' (not validated)'}, "
                    f"version {codesystem.get('version') or '-'}, "
                    f"prefix {prefix}, content {codesystem.get('content') or '-'}"
                )
                before = report.read["concepts"]
                yield from _records(codesystem, prefix, options, state, report)
                _check_count(codesystem, report.read["concepts"] - before, where)
    yield from _relations(state, report)


def _check_count(resource: dict[str, Any], held: int, where: _Where) -> None:
    """Warn when a ``complete`` CodeSystem's ``count`` is not the ``held`` concepts."""
    count = resource.get("count")
    if resource.get("content") != "complete" or not isinstance(count, int) or count == held:
        return
    line = f":{where.line}" if where.line is not None else ""
    logger.warning(
        "%s%s: CodeSystem %s has count %d but holds %d concepts: the list may be cut short",
        where.path,
        line,
        resource.get("url") or resource.get("id") or "(no url)",
        count,
        held,
    )
