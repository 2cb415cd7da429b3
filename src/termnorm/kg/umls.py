"""UMLS Metathesaurus (RRF) → concepts, terms and relations, streamed line by line.

Reads ``MRCONSO.RRF`` (required), ``MRSTY.RRF`` and ``MRREL.RRF`` (optional, with a note in
the report when absent) from a ``META`` folder, in the real pipe-delimited layout with a
trailing ``|`` (MRCONSO 18 fields, MRREL 16, MRSTY 6); ``.gz`` files are read as well. When
the release's ``MRFILES.RRF`` is there, the rows read of each table are compared with the
count it lists (``RWS``), and a table with fewer or more rows (a file cut short) is warned
about.

Memory stays bounded on the full Metathesaurus (15M MRCONSO rows, 88M MRREL rows): only one
CUI's rows are held at a time (MRCONSO is sorted by CUI; an unsorted file is an error), plus
the set of kept CUIs and the CUI → semantic types map (a few hundred MB each).

* Concepts: ``UMLS:<CUI>``; name = the English ``TS=P, STT=PF, ISPREF=Y`` row, else any
  kept ``P/PF/Y`` row, else the first kept row; semantic types = MRSTY ``STY`` names;
  ``alt_ids`` = the kept rows' ``SAB:CODE`` (option ``codes_as_alt_ids``).
* Terms: rows filtered by language (``LAT``), source (``SAB``) and ``SUPPRESS`` (O, E, Y
  dropped unless ``keep_suppressed``); strings deduplicated per CUI case-insensitively.
* Relations: label ``REL:RELA`` (``REL`` alone without RELA), as CODER does. An MRREL row
  ``CUI1|…|REL|CUI2|…|RELA`` reads "CUI2 is RELA of CUI1", so it becomes
  ``head=UMLS:CUI2, relation=REL:RELA, tail=UMLS:CUI1`` (``CHD:isa``: head isa tail).
  Self-loops, rows whose endpoints are not kept concepts, ``REL`` in ``skip_rels`` (``XR``,
  "not related", by default) and repeated ``(head, label, tail)`` are dropped.
  ``one_direction`` keeps one row of each inverse pair, a rule decided per row (MRREL lists
  both directions): for the asymmetric pairs keep ``CHD`` (not PAR), ``RN`` (not RB) and
  ``AQ`` (not QB), which point from the specific to the general like ``is_a``; for symmetric
  ``REL`` (RO, SIB, RQ, SY, RL, RU, …) keep the row whose head CUI sorts first.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.kg._text import Record, dedup_terms, iter_lines
from termnorm.kg.options import UmlsOptions
from termnorm.kg.records import Concept, LoadReport, Relation

log = logging.getLogger(__name__)

NAMESPACE = "UMLS"
MRCONSO_FIELDS, MRREL_FIELDS, MRSTY_FIELDS = 18, 16, 6
SUPPRESSIBLE = frozenset({"O", "E", "Y"})
REL_INVERSE = {
    "RB": "RN",
    "RN": "RB",
    "PAR": "CHD",
    "CHD": "PAR",
    "AQ": "QB",
    "QB": "AQ",
}
"""Asymmetric REL pairs; every other REL (RO, SIB, RQ, SY, RL, RU, XR, …) is its own inverse."""
ONE_DIRECTION_KEEP = frozenset({"CHD", "RN", "AQ"})
LAT_TO_ISO = {
    "ENG": "en", "SPA": "es", "FRE": "fr", "GER": "de", "ITA": "it", "POR": "pt",
    "DUT": "nl", "SWE": "sv", "DAN": "da", "NOR": "no", "FIN": "fi", "CZE": "cs",
    "POL": "pl", "HUN": "hu", "RUS": "ru", "JPN": "ja", "CHI": "zh", "KOR": "ko",
    "TUR": "tr", "GRE": "el", "HEB": "he", "ARA": "ar", "EST": "et", "HRV": "hr",
    "LAV": "lv", "BAQ": "eu", "UKR": "uk", "PER": "fa", "LIT": "lt",
}  # fmt: skip
"""UMLS ``LAT`` codes → ISO 639-1 (the ``lang`` column); other codes are lower-cased."""
_ISO_TO_LAT = {iso: lat for lat, iso in LAT_TO_ISO.items()}

# MRCONSO columns
_CUI, _LAT, _TS, _STT, _ISPREF, _SAB, _CODE, _STR, _SUPPRESS = 0, 1, 2, 4, 6, 11, 13, 14, 16
# MRREL columns
_CUI1, _REL, _CUI2, _RELA, _RSAB, _RSUPPRESS = 0, 3, 4, 7, 10, 14


@dataclass(frozen=True)
class UmlsFiles:
    """The RRF files of one Metathesaurus release folder."""

    mrconso: Path
    mrrel: Path | None
    mrsty: Path | None
    mrfiles: Path | None = None


def find_umls_files(path: Path) -> UmlsFiles:
    """Locate MRCONSO/MRREL/MRSTY given a ``META`` folder, its parent, or MRCONSO itself."""
    if path.is_file():
        folder = path.parent
    elif (path / "META").is_dir():
        folder = path / "META"
    else:
        folder = path

    def find(stem: str) -> Path | None:
        for name in (f"{stem}.RRF", f"{stem}.RRF.gz"):
            if (folder / name).is_file():
                return folder / name
        return None

    mrconso = path if path.is_file() else find("MRCONSO")
    if mrconso is None:
        raise InputFormatError(path, None, "no MRCONSO.RRF here (give the UMLS META folder)")
    return UmlsFiles(mrconso, find("MRREL"), find("MRSTY"), find("MRFILES"))


def listed_rows(path: Path | None) -> dict[str, int]:
    """``table -> rows`` (``MRCONSO -> 15000000``) as a release's ``MRFILES.RRF`` lists them
    (``FIL|DES|FMT|CLS|RWS|BTS|``); empty without the file. A row count that is not a
    number is an :class:`InputFormatError` naming the line."""
    listed: dict[str, int] = {}
    if path is None:
        return listed
    for number, line in iter_lines(path):
        fields = line.split("|")
        if len(fields) < 5:
            continue
        if not fields[4].strip().isdigit():
            raise InputFormatError(path, number, f"RWS {fields[4]!r} is not a row count")
        listed[fields[0].strip().removesuffix(".RRF")] = int(fields[4])
    return listed


def check_rows(listed: dict[str, int], table: str, report: LoadReport) -> None:
    """Warn (and note in the report's info) when the rows read of ``table`` differ from the
    count ``MRFILES.RRF`` lists for it."""
    expected, read = listed.get(table), report.read[f"{table} rows"]
    if expected is None or expected == read:
        return
    report.info[f"{table} rows listed in MRFILES"] = str(expected)
    log.warning(
        "%s.RRF has %d rows but MRFILES.RRF lists %d: the file may be cut short or from "
        "another release; compare it with the download",
        table,
        read,
        expected,
    )


def lat_code(lang: str) -> str:
    """``"en" -> "ENG"``; a LAT code is returned upper-cased."""
    return _ISO_TO_LAT.get(lang.lower(), lang.upper())


def rrf_rows(
    path: Path, n_fields: int, table: str, report: LoadReport
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each non-empty RRF line, split into exactly ``n_fields``
    fields (trailing ``|`` optional) and counted in ``report.read``."""
    for number, line in iter_lines(path):
        if not line:
            continue
        fields = line.split("|")
        if len(fields) == n_fields + 1 and fields[-1] == "":
            fields.pop()
        if len(fields) != n_fields:
            raise InputFormatError(
                path,
                number,
                f"expected {n_fields} '|'-separated fields ({table}), found {len(fields)}",
            )
        report.read[f"{table} rows"] += 1
        yield number, fields


def load_umls(
    path: Path, report: LoadReport, options: UmlsOptions | None = None
) -> Iterator[Record]:
    """Yield UMLS concepts (each followed by its terms), then relations; fill ``report``."""
    options = options or UmlsOptions()
    files = find_umls_files(path)
    report.info["mrconso"] = str(files.mrconso)
    types: dict[str, tuple[str, ...]] = {}
    listed = listed_rows(files.mrfiles)
    if files.mrsty is None:
        report.info["mrsty"] = "absent: no semantic types"
    else:
        report.info["mrsty"] = str(files.mrsty)
        types = read_mrsty(files.mrsty, report)
        check_rows(listed, "MRSTY", report)
    kept: set[str] = set()
    yield from _concepts(files.mrconso, types, options, report, kept)
    check_rows(listed, "MRCONSO", report)
    types.clear()
    if files.mrrel is None:
        report.info["mrrel"] = "absent: no relations"
        return
    report.info["mrrel"] = str(files.mrrel)
    yield from _relations(files.mrrel, kept, options, report)
    check_rows(listed, "MRREL", report)


def read_mrsty(path: Path, report: LoadReport) -> dict[str, tuple[str, ...]]:
    """``CUI -> (STY name, ...)`` in file order; identical tuples are shared to save memory."""
    out: dict[str, tuple[str, ...]] = {}
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    for _, f in rrf_rows(path, MRSTY_FIELDS, "MRSTY", report):
        cui, sty = f[0], f[3]
        have = out.get(cui, ())
        if sty in have:
            continue
        new = (*have, sty)
        out[cui] = shared.setdefault(new, new)
    return out


def _concepts(
    path: Path,
    types: dict[str, tuple[str, ...]],
    options: UmlsOptions,
    report: LoadReport,
    kept: set[str],
) -> Iterator[Record]:
    """Group MRCONSO rows by CUI (the file is sorted by CUI), filter, dedup, yield."""
    langs = {lat_code(x) for x in options.langs}
    sabs = set(options.sabs)
    current = ""
    rows: list[list[str]] = []
    for number, f in rrf_rows(path, MRCONSO_FIELDS, "MRCONSO", report):
        cui = f[_CUI]
        if cui != current:
            if cui < current:
                raise InputFormatError(
                    path, number, f"MRCONSO is not sorted by CUI ({cui} after {current})"
                )
            if current:
                yield from _one_concept(current, rows, types, options, report, kept)
            current, rows = cui, []
        if f[_LAT] not in langs:
            report.drop("term: language not selected (LAT)")
        elif sabs and f[_SAB] not in sabs:
            report.drop("term: source vocabulary not selected (SAB)")
        elif f[_SUPPRESS] in SUPPRESSIBLE and not options.keep_suppressed:
            report.drop(f"term: suppressible (SUPPRESS={f[_SUPPRESS]})")
        else:
            rows.append(f)
    if current:
        yield from _one_concept(current, rows, types, options, report, kept)


def _preferred_index(rows: list[list[str]]) -> int:
    """Row index of the concept's name: English P/PF/Y, else any P/PF/Y, else the first."""
    best = -1
    for i, f in enumerate(rows):
        if f[_TS] == "P" and f[_STT] == "PF" and f[_ISPREF] == "Y":
            if f[_LAT] == "ENG":
                return i
            if best < 0:
                best = i
    return max(best, 0)


def _one_concept(
    cui: str,
    rows: list[list[str]],
    types: dict[str, tuple[str, ...]],
    options: UmlsOptions,
    report: LoadReport,
    kept: set[str],
) -> Iterator[Record]:
    """One CUI's kept rows → a Concept and its deduplicated Terms."""
    if not rows:
        report.drop("concept: no term left after filters")
        return
    first = _preferred_index(rows)
    ordered = [rows[first], *rows[:first], *rows[first + 1 :]]
    cid = f"{NAMESPACE}:{cui}"
    items = [(f[_STR], LAT_TO_ISO.get(f[_LAT], f[_LAT].lower()), f[_SAB]) for f in ordered]
    terms = dedup_terms(cid, items, report)
    if not terms:
        report.drop("concept: no term left after filters")
        return
    alt_ids: tuple[str, ...] = ()
    if options.codes_as_alt_ids:
        codes = {f"{f[_SAB]}:{f[_CODE]}" for f in rows if f[_CODE] and f[_CODE] != "NOCODE"}
        alt_ids = tuple(sorted(codes))
    kept.add(cui)
    report.keep("concepts")
    yield Concept(cid, terms[0].term, semantic_types=types.get(cui, ()), alt_ids=alt_ids)
    yield from terms


def relation_label(rel: str, rela: str) -> str:
    """CODER's relation label: ``REL:RELA``, or ``REL`` when RELA is empty."""
    return f"{rel}:{rela}" if rela else rel


def keeps_direction(rel: str, head: str, tail: str) -> bool:
    """The ``one_direction`` rule: is this row the kept member of its inverse pair?"""
    if rel in REL_INVERSE:
        return rel in ONE_DIRECTION_KEEP
    return head < tail


def _relations(
    path: Path, kept: set[str], options: UmlsOptions, report: LoadReport
) -> Iterator[Relation]:
    """Stream MRREL rows into Relations; duplicates are caught per CUI1 run (file sorted)."""
    sabs = set(options.sabs)
    skip = set(options.skip_rels)
    current = ""
    seen: set[tuple[str, str]] = set()
    unsorted = False
    for _, f in rrf_rows(path, MRREL_FIELDS, "MRREL", report):
        cui1, rel, cui2 = f[_CUI1], f[_REL], f[_CUI2]
        if cui1 != current:
            unsorted = unsorted or cui1 < current
            current = cui1
            seen.clear()
        reason = _relation_drop_reason(f, kept, sabs, skip, options)
        if reason:
            report.drop(reason)
            continue
        label = relation_label(rel, f[_RELA])
        if (label, cui2) in seen:
            report.drop("relation: duplicate")
            continue
        seen.add((label, cui2))
        report.keep("relations")
        yield Relation(f"{NAMESPACE}:{cui2}", label, f"{NAMESPACE}:{cui1}")
    if unsorted:
        log.warning("%s is not sorted by CUI1: some duplicate relations may remain", path)
        report.info["mrrel_sorted"] = "no: duplicates removed per CUI1 run only"


def _relation_drop_reason(
    f: list[str], kept: set[str], sabs: set[str], skip: set[str], options: UmlsOptions
) -> str:
    """Why an MRREL row is dropped (``""`` when it is kept)."""
    cui1, rel, cui2 = f[_CUI1], f[_REL], f[_CUI2]
    if sabs and f[_RSAB] not in sabs:
        return "relation: source vocabulary not selected (SAB)"
    if f[_RSUPPRESS] in SUPPRESSIBLE and not options.keep_suppressed:
        return f"relation: suppressible (SUPPRESS={f[_RSUPPRESS]})"
    if rel in skip:
        return f"relation: REL {rel} skipped"
    if cui1 == cui2:
        return "relation: self-loop"
    if cui1 not in kept or cui2 not in kept:
        return "relation: endpoint not a kept concept"
    if options.one_direction and not keeps_direction(rel, cui2, cui1):
        return "relation: inverse direction (one_direction)"
    return ""
