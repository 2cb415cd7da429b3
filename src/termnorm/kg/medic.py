"""CTD MEDIC disease vocabulary → records, in either of its two layouts.

* **BioSyn layout** (``medic_06Jul2012.txt``): ``IDs||name|synonym|synonym…``, one concept
  per line. ``IDs`` are ``|``-joined MeSH ``D…``/``C…`` IDs and/or bare OMIM numbers (or
  already prefixed ``MESH:…``/``OMIM:…``); the first MeSH ID (else the first ID) becomes the
  concept ID (``MESH:D…``, ``OMIM:n``), the others go to ``alt_ids``. MeSH wins because the
  file also has lines such as ``608446|D009203||Myocardial Infarction``, which CTD's own
  layout lists as ``MESH:D009203`` with alt ID ``OMIM:608446``: both layouts then agree and
  merge. No relations.
* **CTD layout** (``CTD_diseases.tsv``): ``#`` comment lines, then tab-separated
  ``DiseaseName, DiseaseID, AltDiseaseIDs, Definition, ParentIDs, TreeNumbers,
  ParentTreeNumbers, Synonyms[, SlimMappings]`` with ``|``-joined lists. ``ParentIDs`` give
  ``child is_a parent`` edges; ``SlimMappings`` (when present) give the semantic types.

The layout is detected from the first data line (a tab → CTD, ``||`` → BioSyn). A concept ID
seen twice keeps its first line (the repeat is counted as dropped). Names are stored as plain
text: the BioSyn file writes ``Alzheimer&apos;s Disease`` and ``Kienb&#246;ck Disease``, so HTML
character references are decoded (``html.unescape``) and the lines that had any are counted
under ``read["lines with HTML entities (decoded)"]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.kg._text import Record, concept_terms, decode_entities, iter_lines
from termnorm.kg.options import MedicOptions
from termnorm.kg.records import Concept, LoadReport, Relation

CTD_COLUMNS = (
    "DiseaseName",
    "DiseaseID",
    "AltDiseaseIDs",
    "Definition",
    "ParentIDs",
    "TreeNumbers",
    "ParentTreeNumbers",
    "Synonyms",
    "SlimMappings",
)
_MESH = re.compile(r"^[CD]\d*$")  # "C" is the root, "Diseases"
_OMIM = re.compile(r"^\d+$")


def medic_id(raw: str) -> str:
    """``D003920 -> MESH:D003920``, ``222100 -> OMIM:222100``; prefixed IDs are kept."""
    raw = raw.strip()
    if ":" in raw:
        return raw
    if _MESH.match(raw):
        return f"MESH:{raw}"
    if _OMIM.match(raw):
        return f"OMIM:{raw}"
    raise ValueError(f"not a MeSH or OMIM ID: {raw!r}")


def load_medic(
    path: Path, report: LoadReport, options: MedicOptions | None = None
) -> Iterator[Record]:
    """Yield MEDIC concepts (each followed by its terms), then relations (CTD layout)."""
    options = options or MedicOptions()
    report.info["file"] = str(path)
    seen: set[str] = set()
    edges: list[Relation] = []
    layout = ""
    for number, line in iter_lines(path):
        if not line.strip() or line.startswith("#"):
            continue
        layout = layout or ("ctd" if "\t" in line else "biosyn")
        report.read["lines"] += 1
        if layout == "ctd":
            cid, name, alt, syns, types, parents = _ctd_line(line, path, number)
        else:
            cid, name, alt, syns = _biosyn_line(line, path, number)
            types, parents = (), []
        name, *syns = decode_entities([name, *syns], report)
        if cid in seen:
            report.drop("concept: repeated ID (first line kept)")
            continue
        seen.add(cid)
        report.keep("concepts")
        yield Concept(cid, " ".join(name.split()), semantic_types=types, alt_ids=alt)
        kept_syns = syns if options.synonyms else []
        yield from concept_terms(cid, name, kept_syns, report, source="MEDIC")
        edges += [Relation(cid, "is_a", p) for p in parents if p != cid]
    report.info["layout"] = layout or "empty"
    report.keep("relations", n=len(edges))
    yield from edges


def _ids(raw: str, path: Path, number: int) -> list[str]:
    """Parse ``|``-joined IDs; a malformed one is an error naming the line."""
    try:
        return list(dict.fromkeys(medic_id(x) for x in raw.split("|") if x.strip()))
    except ValueError as exc:
        raise InputFormatError(path, number, str(exc)) from None


def _biosyn_line(line: str, path: Path, number: int) -> tuple[str, str, tuple[str, ...], list[str]]:
    """``IDs||name|syn…`` → (concept ID, name, alt IDs, synonyms)."""
    ids_part, sep, names_part = line.partition("||")
    names = names_part.split("|")
    if not sep or not names[0].strip():
        raise InputFormatError(path, number, "expected 'IDs||name|synonym…'")
    ids = _ids(ids_part, path, number)
    if not ids:
        raise InputFormatError(path, number, "no concept ID before '||'")
    ids.sort(key=lambda i: not i.startswith("MESH:"))  # stable: first MeSH ID first
    return ids[0], names[0], tuple(ids[1:]), [n for n in names[1:] if n.strip()]


def _ctd_line(
    line: str, path: Path, number: int
) -> tuple[str, str, tuple[str, ...], list[str], tuple[str, ...], list[str]]:
    """One ``CTD_diseases.tsv`` row → (ID, name, alt IDs, synonyms, types, parent IDs)."""
    fields = line.split("\t")
    if len(fields) not in (len(CTD_COLUMNS) - 1, len(CTD_COLUMNS)):
        raise InputFormatError(
            path,
            number,
            f"expected 8 or 9 tab-separated columns (CTD_diseases), found {len(fields)}",
        )
    name, cid = fields[0].strip(), fields[1].strip()
    if not name or not cid:
        raise InputFormatError(path, number, "empty DiseaseName or DiseaseID")
    cid = _ids(cid, path, number)[0]
    alt = tuple(a for a in _ids(fields[2], path, number) if a != cid)
    parents = _ids(fields[4], path, number)
    synonyms = [s for s in fields[7].split("|") if s.strip()]
    types = tuple(t.strip() for t in fields[8].split("|") if t.strip()) if len(fields) > 8 else ()
    return cid, name, alt, synonyms, types, parents
