"""A SNOMED CT RF2 Snapshot release → records: ``termnorm kg build --format snomed``.

The folder is the release root, its ``Snapshot`` folder or ``Snapshot/Terminology``; the four
files are found by their prefixes (:data:`FILES`), exactly one each (a missing or ambiguous
one is refused by name). They are tab-separated without quoting, with the RF2 headers, and
streamed through :func:`termnorm.kg.athena.read_batches` (errors name ``FILE:LINE``).

* **Versions:** where a Snapshot holds several rows of one component ``id``, the row with the
  latest ``effectiveTime`` wins (a component inactivated later is dropped); then only
  ``active`` components are kept. Every other row is counted as dropped, with its reason.
* **Concepts** ``SNOMEDCT:<sctid>``; attributes ``module_id`` and ``definition_status``
  (``primitive`` / ``defined``); the FSN's semantic tag (``disorder`` of
  "Anemia (disorder)") is the semantic type.
* **Terms:** active FSNs and synonyms of active concepts. The language reference set
  ``language_refset`` (US English by default, GB English ``900000000000508004``) decides
  the preferred term: the synonym it marks *preferred* names the concept (source
  ``SNOMEDCT:PT``), then come the synonyms it marks *acceptable* (``SNOMEDCT:SY``), the FSN
  **without its tag** (``SNOMEDCT:FSN``, when it adds a new string) and the synonyms it
  does not list (``SNOMEDCT:not-in-refset``: the other dialect's spellings, kept because a
  query may be written in either). The tag is stripped because no query carries it: "(disorder)" would
  pull the FSN's vector away from the words people search with, and the tag is kept,
  filterable, as the semantic type. A concept the refset gives no preferred synonym is
  named by its first other term and counted.
* **Relations:** active ``116680003 |Is a|`` rows become ``child is_a parent``; every other
  active attribute relationship becomes ``source <type> destination``, the type named by its
  preferred term in snake case (``finding_site``), or by its ``typeId`` when the type
  concept is not in the release (counted). Rows to or from inactive or absent concepts, and
  repeats (the same triple in another role group), are counted as dropped.

Memory: the loaded columns of the kept rows (integers, and the terms of active descriptions
of active concepts), never a Python object per row of the relationship or refset files.
The record stream is stream-safe (:mod:`termnorm.kg.stream`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from termnorm.errors import InputFormatError
from termnorm.kg._sorted import member as _member
from termnorm.kg._sorted import nonzero
from termnorm.kg._text import Record, dedup_terms
from termnorm.kg.athena import read_batches, table_layout
from termnorm.kg.options import GB_ENGLISH, US_ENGLISH, SnomedOptions
from termnorm.kg.records import Concept, LoadReport, Relation

__all__ = ["FILES", "GB_ENGLISH", "NAMESPACE", "US_ENGLISH", "SnomedOptions", "load_snomed"]

NAMESPACE = "SNOMEDCT"
IS_A = "is_a"
IS_A_TYPE = 116680003
FSN = 900000000000003001
SYNONYM = 900000000000013009
PREFERRED = 900000000000548007
ACCEPTABLE = 900000000000549004
DEFINITION_STATUS = {900000000000074008: "primitive", 900000000000073002: "defined"}
FILES = {  # table: file name prefix in an RF2 Snapshot
    "concept": "sct2_Concept_Snapshot",
    "description": "sct2_Description_Snapshot",
    "relationship": "sct2_Relationship_Snapshot",
    "language refset": "der2_cRefset_LanguageSnapshot",
}
_KIND = "an RF2 Snapshot file of SNOMED CT"
_INT = pa.int64()
_VERSION = {"id": _INT, "effectivetime": _INT, "active": _INT}
_COLUMNS: dict[str, dict[str, pa.DataType]] = {
    "concept": {**_VERSION, "moduleid": _INT, "definitionstatusid": _INT},
    "description": {
        **_VERSION,
        "conceptid": _INT,
        "languagecode": pa.string(),
        "typeid": _INT,
        "term": pa.string(),
    },
    "relationship": {**_VERSION, "sourceid": _INT, "destinationid": _INT, "typeid": _INT},
    "language refset": {
        **_VERSION,
        "id": pa.string(),  # a UUID
        "refsetid": _INT,
        "referencedcomponentid": _INT,
        "acceptabilityid": _INT,
    },
}
_TAG = re.compile(r"^(.*?)\s*\(([^()]+)\)\s*$")
# Order of a concept's terms: rank -> source label.
_SOURCES = ("PT", "SY", "FSN", "FSN", "not-in-refset")


def _snapshot_root(path: Path) -> Path:
    """The folder searched for the RF2 files: ``path/Snapshot`` for a release root, the
    parent of a ``Terminology`` folder whose sibling is ``Refset``, else ``path``."""
    if (path / "Snapshot").is_dir():
        return path / "Snapshot"
    if path.name == "Terminology" and (path.parent / "Refset").is_dir():
        return path.parent
    return path


def find_files(path: Path, report: LoadReport) -> dict[str, Path]:
    """The four Snapshot files of the release at ``path`` (see the module doc); each must
    match exactly one file."""
    if not path.is_dir():
        raise InputFormatError(
            path, None, "not a folder: give the RF2 release folder, or its Snapshot folder"
        )
    root = _snapshot_root(path)
    files: dict[str, Path] = {}
    for table, prefix in FILES.items():
        found = sorted(p for p in root.rglob(f"{prefix}*") if p.is_file())
        if not found:
            raise InputFormatError(
                root, None, f"no {prefix}_*.txt file (the RF2 {table} table) in this folder"
            )
        if len(found) > 1:
            names = ", ".join(str(p.relative_to(root)) for p in found)
            raise InputFormatError(
                root,
                None,
                f"{len(found)} files match {prefix}* ({names}); give the Snapshot folder of "
                "one release, holding one file of each table",
            )
        files[table] = found[0]
        report.info[table] = str(found[0])
    return files


def _read_current(
    path: Path,
    table: str,
    report: LoadReport,
    select: Callable[[pd.DataFrame], pd.Series] | None = None,
) -> pd.DataFrame:
    """The rows of ``path`` that are the latest version of an active component.

    ``select`` (a frame → boolean mask, counting what it drops) filters each batch on
    columns that do not change between versions of a component, so the rows it drops are
    never held."""
    frames = []
    for frame in read_batches(table_layout(path), _COLUMNS[table], kind=_KIND):
        report.read[f"{table} rows"] += len(frame)
        frames.append(frame if select is None else frame[select(frame)])
    if not frames:
        return pd.DataFrame({name: [] for name in _COLUMNS[table]})
    rows = pd.concat(frames, ignore_index=True)
    latest = rows.sort_values(["id", "effectivetime"], kind="stable").drop_duplicates(
        "id", keep="last"
    )
    report.drop(f"{table}: superseded by a later row of its id", len(rows) - len(latest))
    active = latest["active"] == 1
    report.drop(f"{table}: inactive", nonzero(~active))
    return latest[active]


@dataclass
class _Concepts:
    """The active concepts, sorted by ID, with their module and definition status."""

    ids: np.ndarray
    modules: np.ndarray
    statuses: np.ndarray


def _concepts(path: Path, report: LoadReport) -> _Concepts:
    rows = _read_current(path, "concept", report).sort_values("id")
    return _Concepts(
        rows["id"].to_numpy(dtype=np.int64),
        rows["moduleid"].to_numpy(dtype=np.int64),
        rows["definitionstatusid"].to_numpy(dtype=np.int64),
    )


@dataclass
class _Acceptability:
    """The members of the chosen language refset: description IDs (sorted) and the
    acceptabilityId of each."""

    members: np.ndarray
    values: np.ndarray

    def of(self, descriptions: np.ndarray) -> np.ndarray:
        """The acceptabilityId of each of ``descriptions`` (0 for a non-member)."""
        inside = _member(self.members, descriptions)
        at = np.minimum(np.searchsorted(self.members, descriptions), len(self.members) - 1)
        return np.where(inside, self.values[at] if len(self.members) else 0, 0)


def _acceptability(path: Path, refset: int, report: LoadReport) -> _Acceptability:
    """The active members of ``refset``; a refset with no row in the file is an error
    listing the refsets it has."""
    seen: set[int] = set()

    def chosen(frame: pd.DataFrame) -> pd.Series:
        seen.update(int(r) for r in frame["refsetid"].unique())
        keep = frame["refsetid"] == refset
        report.drop("language refset: another refset (not language_refset)", nonzero(~keep))
        return keep

    rows = _read_current(path, "language refset", report, chosen)
    if refset not in seen:
        found = ", ".join(str(r) for r in sorted(seen)) or "none"
        raise InputFormatError(
            path,
            None,
            f"no row of language refset {refset} (found: {found}); choose one with "
            f"--language-refset (US English {US_ENGLISH}, GB English {GB_ENGLISH})",
        )
    rows = rows.sort_values("referencedcomponentid", kind="stable").drop_duplicates(
        "referencedcomponentid", keep="last"
    )
    return _Acceptability(
        rows["referencedcomponentid"].to_numpy(dtype=np.int64),
        rows["acceptabilityid"].to_numpy(dtype=np.int64),
    )


def _descriptions(
    path: Path, concepts: np.ndarray, acceptability: _Acceptability, report: LoadReport
) -> pd.DataFrame:
    """Active FSNs and synonyms of active concepts, with a ``rank`` (index in
    :data:`_SOURCES`), sorted by concept, rank and description ID."""

    def loaded(frame: pd.DataFrame) -> pd.Series:
        typed = frame["typeid"].isin([FSN, SYNONYM])
        report.drop("description: type not loaded (only FSN, synonym)", nonzero(~typed))
        alive = _member(concepts, frame["conceptid"].to_numpy(dtype=np.int64))
        report.drop("description: concept inactive or absent", nonzero(typed & ~alive))
        return typed & alive

    rows = _read_current(path, "description", report, loaded)
    accept = acceptability.of(rows["id"].to_numpy(dtype=np.int64))
    fsn = (rows["typeid"] == FSN).to_numpy()
    rank = np.where(
        fsn,
        np.where(accept == PREFERRED, 2, 3),
        np.where(accept == PREFERRED, 0, np.where(accept == ACCEPTABLE, 1, 4)),
    )
    return rows.assign(rank=rank).sort_values(["conceptid", "rank", "id"], kind="stable")


@dataclass
class _Links:
    """Active relationships between active concepts, without repeats."""

    source: np.ndarray
    type: np.ndarray
    destination: np.ndarray


def _relationships(path: Path, concepts: np.ndarray, report: LoadReport) -> _Links:
    rows = _read_current(path, "relationship", report)
    source = rows["sourceid"].to_numpy(dtype=np.int64)
    destination = rows["destinationid"].to_numpy(dtype=np.int64)
    kind = rows["typeid"].to_numpy(dtype=np.int64)
    has_source, has_destination = _member(concepts, source), _member(concepts, destination)
    report.drop("relationship: source concept inactive or absent", nonzero(~has_source))
    report.drop(
        "relationship: destination concept inactive or absent",
        nonzero(has_source & ~has_destination),
    )
    keep = has_source & has_destination
    triples = np.unique(np.stack([source[keep], kind[keep], destination[keep]], axis=1), axis=0)
    report.drop("relationship: repeat (another role group)", nonzero(keep) - len(triples))
    return _Links(triples[:, 0], triples[:, 1], triples[:, 2])


def relation_label(name: str) -> str:
    """A relationship type's preferred term in snake case: ``Finding site`` → ``finding_site``."""
    return re.sub(r"[^0-9a-z]+", "_", name.casefold()).strip("_")


def split_tag(fsn: str) -> tuple[str, str]:
    """``("Anemia", "disorder")`` from ``"Anemia (disorder)"``; ``(fsn, "")`` without a tag."""
    match = _TAG.match(fsn)
    return (match.group(1), match.group(2)) if match else (fsn, "")


def load_snomed(
    path: Path, report: LoadReport, options: SnomedOptions | None = None
) -> Iterator[Record]:
    """Yield the active concepts of an RF2 Snapshot (each followed by its terms), then the
    relations between them (module docstring)."""
    options = options or SnomedOptions()
    refset = options.language_refset.strip()
    if not refset.isdigit():
        raise ValueError(f"option language_refset must be an SCTID (digits), got {refset!r}")
    files = find_files(Path(path), report)
    concepts = _concepts(files["concept"], report)
    links = _relationships(files["relationship"], concepts.ids, report)
    acceptability = _acceptability(files["language refset"], int(refset), report)
    rows = _descriptions(files["description"], concepts.ids, acceptability, report)
    owners = rows["conceptid"].to_numpy(dtype=np.int64)
    texts, langs = rows["term"].tolist(), rows["languagecode"].tolist()
    ranks = rows["rank"].tolist()
    del rows
    starts = np.searchsorted(owners, concepts.ids, side="left")
    ends = np.searchsorted(owners, concepts.ids, side="right")
    attribute_types = set(np.unique(links.type[links.type != IS_A_TYPE]).tolist())
    type_names: dict[int, str] = {}
    emitted = np.zeros(len(concepts.ids), dtype=bool)
    for at, cid in enumerate(concepts.ids.tolist()):
        lo, hi = int(starts[at]), int(ends[at])
        tag, items = "", []
        for i in range(lo, hi):
            text, rank = texts[i], ranks[i]
            if rank in (2, 3):
                text, found = split_tag(text)
                tag = tag or found
            items.append((text, langs[i], f"{NAMESPACE}:{_SOURCES[rank]}"))
        if not items:
            report.drop("concept: no active FSN or synonym")
            continue
        if ranks[lo] != 0:
            report.note("concepts without a preferred synonym in the language refset")
        terms = dedup_terms(f"{NAMESPACE}:{cid}", items, report)
        emitted[at] = True
        report.keep("concepts")
        if cid in attribute_types:
            type_names[cid] = terms[0].term
        yield _concept(cid, terms[0].term, tag, concepts, at)
        yield from terms
    yield from _relations(links, concepts.ids[emitted], type_names, report)


def _concept(cid: int, name: str, tag: str, concepts: _Concepts, at: int) -> Concept:
    """The :class:`Concept` of the active concept at position ``at``."""
    status = int(concepts.statuses[at])
    return Concept(
        f"{NAMESPACE}:{cid}",
        name,
        semantic_types=(tag,) if tag else (),
        attributes=(
            ("module_id", str(int(concepts.modules[at]))),
            ("definition_status", DEFINITION_STATUS.get(status, str(status))),
        ),
    )


def _relations(
    links: _Links, emitted: np.ndarray, type_names: dict[int, str], report: LoadReport
) -> Iterator[Relation]:
    """``is_a`` and attribute relations between emitted concepts."""
    inside = _member(emitted, links.source) & _member(emitted, links.destination)
    report.drop("relationship: endpoint concept has no term", nonzero(~inside))
    labels: dict[int, str] = {}
    for kind in np.unique(links.type[inside]).tolist():
        if kind == IS_A_TYPE:
            labels[kind] = IS_A
        elif kind in type_names:
            labels[kind] = relation_label(type_names[kind])
        else:
            labels[kind] = str(kind)
            report.note("relationship types not in the release (named by typeId)")
    report.keep("relations", n=nonzero(inside))
    for source, kind, destination in zip(
        links.source[inside].tolist(),
        links.type[inside].tolist(),
        links.destination[inside].tolist(),
        strict=True,
    ):
        yield Relation(f"{NAMESPACE}:{source}", labels[kind], f"{NAMESPACE}:{destination}")
