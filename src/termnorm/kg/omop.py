"""An Athena (OMOP vocabulary) download folder → records: ``termnorm kg build --format omop``.

The folder holds ``CONCEPT``, ``CONCEPT_RELATIONSHIP`` and, when present, ``CONCEPT_SYNONYM``
and ``CONCEPT_ANCESTOR`` (tab-separated as Athena ships them, or comma CSV with a header:
:mod:`termnorm.kg.athena`). Every table is streamed in batches; what is held in memory is
the sorted array of kept concept IDs, the ``Maps to`` and ``Is a`` pairs that touch them,
the synonyms of kept concepts and the names of the concepts that map to them.

* **Concepts** ``OMOP:<concept_id>``, named by ``concept_name``; semantic type = the
  ``domain_id``; alternative ID = the vocabulary's own CURIE (``SNOMEDCT:22298006``,
  ``LOINC:2160-0``, ``RxNorm:1191``; other vocabularies by their ``vocabulary_id`` without
  spaces); attributes ``vocabulary_id``, ``concept_code``, ``domain_id``,
  ``concept_class_id``, ``standard_concept`` (``S``, ``C`` or empty) and, for an invalid
  concept kept with ``include_invalid``, ``invalid_reason``.
* **Filters**, in this order, each drop counted with its reason: invalid concepts
  (``invalid_reason`` set, or ``valid_end_date`` before ``as_of``) unless
  ``include_invalid``; ``vocabulary``, ``domain``, ``concept_class``; ``standard_only``.
* **Terms**: the name (preferred, source = the vocabulary), the ``CONCEPT_SYNONYM`` names in
  the selected languages, and the names (and synonyms) of every other concept that
  ``Maps to`` it through a valid relationship row, with source ``maps_to:<vocabulary>``
  (``maps_to:ICD10CM``), so a non-standard ICD10CM name is searched as a synonym of its
  standard SNOMED target and provenance shows it. Deprecated source concepts count: their
  names reach their replacement.
* **Consistency**: relationship and ancestor rows that name a concept ID absent from
  CONCEPT (not merely filtered out) are counted, and a warning names how many IDs and a
  few of them: a CONCEPT table cut short loads no error otherwise. (This holds every
  concept ID of CONCEPT in memory beside the kept ones.)
* **Hierarchy**: ``Is a`` rows (and ``CONCEPT_ANCESTOR`` rows at ``min_levels_of_separation``
  1) become ``child is_a parent`` relations, as the OBO and ICD loaders write them.
  Relationship rows pointing outside the kept concepts, invalid rows and the types not
  loaded are counted as dropped, by reason.

The record stream is stream-safe (:mod:`termnorm.kg.stream`): each concept once, followed by
its terms, then the relations between emitted concepts, without repeats.
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from termnorm.errors import InputFormatError
from termnorm.kg._sorted import member as _member
from termnorm.kg._sorted import nonzero
from termnorm.kg._text import Record, dedup_terms
from termnorm.kg.athena import TableLayout, find_table, read_batches, table_layout
from termnorm.kg.options import OMOP_ENGLISH as ENGLISH
from termnorm.kg.options import OmopOptions
from termnorm.kg.records import Concept, LoadReport, Relation, Term

__all__ = ["NAMESPACE", "OmopOptions", "load_omop", "vocabulary_curie"]

logger = logging.getLogger(__name__)

NAMESPACE = "OMOP"
IS_A = "is_a"
CURIE_PREFIXES = {"SNOMED": "SNOMEDCT", "RxNorm": "RxNorm", "LOINC": "LOINC"}
"""Vocabulary CURIE prefixes that differ from (or must keep the case of) ``vocabulary_id``."""
ATTRIBUTES = ("vocabulary_id", "concept_code", "domain_id", "concept_class_id", "standard_concept")
_CONCEPT_COLUMNS = {
    "concept_id": pa.int64(),
    "concept_name": pa.string(),
    **{name: pa.string() for name in ATTRIBUTES},
    "valid_end_date": pa.string(),
    "invalid_reason": pa.string(),
}
_RELATIONSHIP_COLUMNS = {
    "concept_id_1": pa.int64(),
    "concept_id_2": pa.int64(),
    "relationship_id": pa.string(),
    "invalid_reason": pa.string(),
}
_SYNONYM_COLUMNS = {
    "concept_id": pa.int64(),
    "concept_synonym_name": pa.string(),
    "language_concept_id": pa.string(),
}
_ANCESTOR_COLUMNS = {
    "ancestor_concept_id": pa.int64(),
    "descendant_concept_id": pa.int64(),
    "min_levels_of_separation": pa.int64(),
}


def vocabulary_curie(vocabulary_id: str, code: str) -> str:
    """The vocabulary's own CURIE of a concept: ``SNOMEDCT:22298006``, ``LOINC:2160-0``."""
    prefix = CURIE_PREFIXES.get(vocabulary_id, vocabulary_id.replace(" ", ""))
    return f"{prefix}:{code}"


def _as_of(options: OmopOptions) -> str:
    """``as_of`` as ``YYYYMMDD`` (today when empty); a malformed date is an error."""
    text = options.as_of.replace("-", "").strip() or _dt.date.today().strftime("%Y%m%d")
    if len(text) != 8 or not text.isdigit():
        raise ValueError(f"option as_of must be a date YYYYMMDD, got {options.as_of!r}")
    return text


class _Folder:
    """The tables of one download folder, their layouts read once."""

    def __init__(self, path: Path, report: LoadReport) -> None:
        if not path.is_dir():
            raise InputFormatError(path, None, "not a folder: give the Athena download folder")
        self.path = path
        self.layouts: dict[str, TableLayout | None] = {}
        for name in ("CONCEPT", "CONCEPT_RELATIONSHIP", "CONCEPT_SYNONYM", "CONCEPT_ANCESTOR"):
            file = find_table(path, name)
            self.layouts[name] = None if file is None else table_layout(file)
            if file is not None:
                report.info[name] = str(file)
        for name in ("CONCEPT", "CONCEPT_RELATIONSHIP"):
            if self.layouts[name] is None:
                raise InputFormatError(
                    path, None, f"no {name} table (expected {name}.csv from an Athena download)"
                )
        concept = self.layouts["CONCEPT"]
        assert concept is not None
        self.concept_path = concept.path
        report.info["delimiter"] = "tab" if concept.delimiter == "\t" else "comma"

    def batches(self, name: str, columns: dict[str, pa.DataType]) -> Iterator[pd.DataFrame]:
        """Batches of table ``name`` (nothing when the optional table is absent)."""
        layout = self.layouts[name]
        if layout is not None:
            yield from read_batches(layout, columns)


def _check_dates(ends: pd.Series, path: Path) -> None:
    """A ``valid_end_date`` that is not ``YYYYMMDD`` (dashes removed) is an error: compared
    as text it would decide validity wrongly."""
    bad = ends[(ends != "") & ~ends.str.fullmatch(r"\d{8}")]
    if len(bad):
        raise InputFormatError(
            path, None, f"valid_end_date {bad.iloc[0]!r} is not a date YYYYMMDD or YYYY-MM-DD"
        )


def _concept_mask(
    frame: pd.DataFrame, options: OmopOptions, as_of: str, report: LoadReport, path: Path
) -> np.ndarray:
    """Which rows of a CONCEPT batch are kept; each other row counted under its first reason."""
    keep = np.ones(len(frame), dtype=bool)
    checks: list[tuple[str, np.ndarray]] = []
    if not options.include_invalid:
        flags = frame["invalid_reason"].str.strip()
        for code in sorted(set(flags) - {""}):
            checks.append((f"concept: invalid (invalid_reason {code})", (flags == code).to_numpy()))
        ends = frame["valid_end_date"].str.replace("-", "", regex=False).str.strip()
        _check_dates(ends, path)
        checks.append(
            ("concept: valid_end_date passed", ((ends != "") & (ends < as_of)).to_numpy())
        )
    for column, wanted in (
        ("vocabulary_id", options.vocabulary),
        ("domain_id", options.domain),
        ("concept_class_id", options.concept_class),
    ):
        if wanted:
            label = column.removesuffix("_id").replace("_", " ")
            checks.append(
                (f"concept: {label} not selected", ~frame[column].isin(wanted).to_numpy())
            )
    if options.standard_only:
        standard = frame["standard_concept"].str.strip() == "S"
        checks.append(("concept: not standard (standard_only)", ~standard.to_numpy()))
    for reason, bad in checks:
        report.drop(reason, nonzero(keep & bad))
        keep &= ~bad
    return keep


def _unique(parts: list[np.ndarray]) -> np.ndarray:
    """The sorted, unique values of ``parts`` (an empty int64 array for none)."""
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


@dataclass
class _ConceptIds:
    """Sorted, unique concept IDs of CONCEPT: ``known`` (every row), ``kept`` (filtered)."""

    known: np.ndarray
    kept: np.ndarray


def _concept_ids(folder: _Folder, options: OmopOptions, report: LoadReport) -> _ConceptIds:
    """Pass 1 over CONCEPT: the sorted, unique IDs of every concept and of those the
    filters keep."""
    as_of = _as_of(options)
    every, kept = [], []
    for frame in folder.batches("CONCEPT", _CONCEPT_COLUMNS):
        report.read["concepts"] += len(frame)
        keep = _concept_mask(frame, options, as_of, report, folder.concept_path)
        ids = frame["concept_id"].to_numpy(dtype=np.int64)
        every.append(ids)
        kept.append(ids[keep])
    return _ConceptIds(_unique(every), _unique(kept))


def _absent(known: np.ndarray, *columns: np.ndarray) -> np.ndarray:
    """The unique IDs of ``columns`` that are not in ``known``."""
    return _unique([ids[~_member(known, ids)] for ids in columns])


def _warn_absent(absent: list[np.ndarray], folder: _Folder, report: LoadReport) -> None:
    """Warn (and record in the report's info) when relationship or ancestor rows name
    concept IDs that CONCEPT lacks: the tables disagree."""
    ids = _unique(absent)
    if not len(ids):
        return
    report.info["concept ids absent from CONCEPT"] = str(len(ids))
    shown = ", ".join(str(i) for i in ids[:5]) + (", ..." if len(ids) > 5 else "")
    logger.warning(
        "%s: CONCEPT_RELATIONSHIP/CONCEPT_ANCESTOR name %d concept IDs that %s lacks (%s); "
        "their links are dropped. CONCEPT may be cut short (compare it with the download) "
        "or the tables come from different downloads",
        folder.path,
        len(ids),
        folder.concept_path.name,
        shown,
    )


@dataclass
class _Links:
    """``Maps to`` pairs (source → kept target, sorted by target) and ``Is a`` edges."""

    map_source: np.ndarray
    map_target: np.ndarray
    child: np.ndarray
    parent: np.ndarray


def _relationships(
    folder: _Folder, concepts: _ConceptIds, options: OmopOptions, report: LoadReport
) -> _Links:
    """Pass over CONCEPT_RELATIONSHIP (and CONCEPT_ANCESTOR): the links that are loaded
    (IDs that CONCEPT lacks: :func:`_warn_absent`)."""
    kept = concepts.kept
    sources, targets, children, parents, absent = [], [], [], [], []
    for frame in folder.batches("CONCEPT_RELATIONSHIP", _RELATIONSHIP_COLUMNS):
        report.read["relationships"] += len(frame)
        one = frame["concept_id_1"].to_numpy(dtype=np.int64)
        two = frame["concept_id_2"].to_numpy(dtype=np.int64)
        absent.append(_absent(concepts.known, one, two))
        kind = frame["relationship_id"].str.strip()
        valid = (frame["invalid_reason"].str.strip() == "").to_numpy()
        is_a, maps_to = (kind == "Is a").to_numpy(), (kind == "Maps to").to_numpy()
        report.drop("relationship: invalid (invalid_reason set)", nonzero(~valid))
        report.drop(
            "relationship: type not loaded (only Is a, Maps to)", nonzero(valid & ~is_a & ~maps_to)
        )
        in_one, in_two = _member(kept, one), _member(kept, two)
        edge = valid & is_a & (one != two)
        report.drop("relationship 'Is a': to itself", nonzero(valid & is_a & (one == two)))
        report.drop(
            "relationship 'Is a': endpoint not a kept concept", nonzero(edge & ~(in_one & in_two))
        )
        edge &= in_one & in_two
        children.append(one[edge])
        parents.append(two[edge])
        link = valid & maps_to & (one != two)
        report.drop("relationship 'Maps to': to itself", nonzero(valid & maps_to & (one == two)))
        if not options.maps_to_synonyms:
            report.drop("relationship 'Maps to': maps_to_synonyms off", nonzero(link))
            continue
        report.drop("relationship 'Maps to': target not a kept concept", nonzero(link & ~in_two))
        link &= in_two
        sources.append(one[link])
        targets.append(two[link])
    for frame in folder.batches("CONCEPT_ANCESTOR", _ANCESTOR_COLUMNS):
        report.read["ancestors"] += len(frame)
        up = frame["ancestor_concept_id"].to_numpy(dtype=np.int64)
        down = frame["descendant_concept_id"].to_numpy(dtype=np.int64)
        absent.append(_absent(concepts.known, up, down))
        direct = (frame["min_levels_of_separation"] == 1).to_numpy() & (up != down)
        report.drop(
            "ancestor: not a direct parent (min_levels_of_separation != 1)", nonzero(~direct)
        )
        inside = _member(kept, up) & _member(kept, down)
        report.drop("ancestor: endpoint not a kept concept", nonzero(direct & ~inside))
        children.append(down[direct & inside])
        parents.append(up[direct & inside])
    _warn_absent(absent, folder, report)
    return _Links(
        *_sorted_pairs(sources, targets, by_second=True), *_edges(children, parents, report)
    )


def _sorted_pairs(
    firsts: list[np.ndarray], seconds: list[np.ndarray], by_second: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated pairs, unique, sorted by the second (else the first) member."""
    if not firsts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    a, b = np.concatenate(firsts), np.concatenate(seconds)
    pairs = np.unique(np.stack([b, a] if by_second else [a, b], axis=1), axis=0)
    return (pairs[:, 1], pairs[:, 0]) if by_second else (pairs[:, 0], pairs[:, 1])


def _edges(
    children: list[np.ndarray], parents: list[np.ndarray], report: LoadReport
) -> tuple[np.ndarray, np.ndarray]:
    """``Is a`` edges without repeats (a pair in both tables counted once, the repeat dropped)."""
    total = sum(len(c) for c in children)
    child, parent = _sorted_pairs(children, parents, by_second=False)
    report.drop("relationship 'Is a': duplicate", total - len(child))
    return child, parent


def _source_names(
    folder: _Folder, wanted: np.ndarray, report: LoadReport
) -> dict[int, tuple[str, str]]:
    """Pass 2 over CONCEPT: ``concept_id -> (name, vocabulary_id)`` of the ``wanted`` IDs."""
    names: dict[int, tuple[str, str]] = {}
    if len(wanted) == 0:
        return names
    for frame in folder.batches("CONCEPT", _CONCEPT_COLUMNS):
        hit = _member(wanted, frame["concept_id"].to_numpy(dtype=np.int64))
        rows = frame[hit]
        for cid, name, vocabulary in zip(
            rows["concept_id"], rows["concept_name"], rows["vocabulary_id"], strict=True
        ):
            names.setdefault(int(cid), (name, vocabulary))
    if len(wanted) > len(names):
        report.drop("relationship 'Maps to': source not in CONCEPT", len(wanted) - len(names))
    return names


def _synonyms(
    folder: _Folder, wanted: np.ndarray, options: OmopOptions, report: LoadReport
) -> dict[int, list[tuple[str, str]]]:
    """``concept_id -> [(synonym, lang), ...]`` from CONCEPT_SYNONYM for the ``wanted`` IDs."""
    out: dict[int, list[tuple[str, str]]] = {}
    languages = set(options.synonym_languages)
    for frame in folder.batches("CONCEPT_SYNONYM", _SYNONYM_COLUMNS):
        report.read["synonyms"] += len(frame)
        language = frame["language_concept_id"].str.strip()
        in_language = language.isin(languages).to_numpy()
        report.drop("synonym: language not selected (synonym_languages)", nonzero(~in_language))
        hit = _member(wanted, frame["concept_id"].to_numpy(dtype=np.int64))
        report.drop("synonym: concept not kept", nonzero(in_language & ~hit))
        rows = frame[in_language & hit]
        for cid, text, lang in zip(
            rows["concept_id"],
            rows["concept_synonym_name"],
            language[in_language & hit],
            strict=True,
        ):
            out.setdefault(int(cid), []).append((text, "en" if lang == ENGLISH else lang))
    return out


def load_omop(
    path: Path, report: LoadReport, options: OmopOptions | None = None
) -> Iterator[Record]:
    """Yield the kept concepts of an Athena download (each followed by its terms), then the
    ``is_a`` relations between them (module docstring)."""
    options = options or OmopOptions()
    folder = _Folder(Path(path), report)
    concepts = _concept_ids(folder, options, report)
    kept = concepts.kept
    links = _relationships(folder, concepts, options, report)
    sources = np.unique(links.map_source)
    names = _source_names(folder, sources, report)
    synonyms = _synonyms(folder, np.union1d(kept, sources), options, report)
    emitted = np.zeros(len(kept), dtype=bool)
    for frame in folder.batches("CONCEPT", _CONCEPT_COLUMNS):
        ids = frame["concept_id"].to_numpy(dtype=np.int64)
        rows: Iterator[Any] = frame[_member(kept, ids)].itertuples(index=False)
        for row in rows:
            at = int(np.searchsorted(kept, int(row.concept_id)))
            if emitted[at]:
                report.drop("concept: duplicate concept_id")
                continue
            terms = _terms(row, links, names, synonyms, report)
            if not terms:
                report.drop("concept: no name and no synonym")
                continue
            emitted[at] = True
            report.keep("concepts")
            yield _concept(row, terms[0].term)
            yield from terms
    inside = _member(kept[emitted], links.child) & _member(kept[emitted], links.parent)
    report.drop("relationship 'Is a': endpoint concept has no term", nonzero(~inside))
    report.keep("relations", n=nonzero(inside))
    for child, parent in zip(links.child[inside], links.parent[inside], strict=True):
        yield Relation(f"{NAMESPACE}:{child}", IS_A, f"{NAMESPACE}:{parent}")


def _concept(record: Any, name: str) -> Concept:
    """The :class:`Concept` of one CONCEPT row (a named tuple), named ``name``."""
    attributes = [(key, str(getattr(record, key)).strip()) for key in ATTRIBUTES]
    if record.invalid_reason.strip():
        attributes.append(("invalid_reason", record.invalid_reason.strip()))
    vocabulary, code = record.vocabulary_id.strip(), record.concept_code.strip()
    domain = record.domain_id.strip()
    return Concept(
        f"{NAMESPACE}:{record.concept_id}",
        name,
        semantic_types=(domain,) if domain else (),
        alt_ids=(vocabulary_curie(vocabulary, code),) if vocabulary and code else (),
        attributes=tuple(attributes),
    )


def _terms(
    record: Any,
    links: _Links,
    names: dict[int, tuple[str, str]],
    synonyms: dict[int, list[tuple[str, str]]],
    report: LoadReport,
) -> list[Term]:
    """The concept's name, its synonyms, then the names and synonyms of the concepts that
    map to it (source ``maps_to:<vocabulary>``), deduplicated and counted."""
    cid, vocabulary = int(record.concept_id), record.vocabulary_id.strip()
    items = [(record.concept_name, "en", vocabulary)]
    items += [(text, lang, vocabulary) for text, lang in synonyms.get(cid, [])]
    lo, hi = np.searchsorted(links.map_target, [cid, cid + 1])
    for source in links.map_source[lo:hi]:
        if int(source) in names:
            name, source_vocabulary = names[int(source)]
            label = f"maps_to:{source_vocabulary.strip()}"
            items.append((name, "en", label))
            items += [(text, lang, label) for text, lang in synonyms.get(int(source), [])]
    report.read["'Maps to' links to kept concepts"] += int(hi - lo)
    return dedup_terms(f"{NAMESPACE}:{cid}", items, report)
