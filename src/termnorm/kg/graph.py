"""The compiled knowledge graph: three tables and a card.

On disk a KG is a folder::

    concepts.parquet   concept_id, name, semantic_types (list<str>), alt_ids (list<str>),
                       attributes (map<str, str>: the vocabulary's own facts, e.g. OMOP's
                       vocabulary_id and concept_code; a folder written before the column
                       existed reads as empty attributes)
    terms.parquet      concept_id, term, lang, source, is_preferred
    relations.parquet  head, relation, tail
    kg.json            sources, options, counts, load reports, content fingerprint

In memory it is a :class:`KnowledgeGraph` holding the tables as pandas DataFrames.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from termnorm._artifacts import atomic_dir, file_sha256, read_card, write_card
from termnorm.errors import ArtifactMismatchError, EmptyResultError

CARD_NAME = "kg.json"
FORMAT_VERSION = 1

CONCEPTS_SCHEMA = pa.schema(
    [
        ("concept_id", pa.string()),
        ("name", pa.string()),
        ("semantic_types", pa.list_(pa.string())),
        ("alt_ids", pa.list_(pa.string())),
        ("attributes", pa.map_(pa.string(), pa.string())),
    ]
)
TERMS_SCHEMA = pa.schema(
    [
        ("concept_id", pa.string()),
        ("term", pa.string()),
        ("lang", pa.string()),
        ("source", pa.string()),
        ("is_preferred", pa.bool_()),
    ]
)
RELATIONS_SCHEMA = pa.schema(
    [("head", pa.string()), ("relation", pa.string()), ("tail", pa.string())]
)
TABLES: dict[str, pa.Schema] = {
    "concepts": CONCEPTS_SCHEMA,
    "terms": TERMS_SCHEMA,
    "relations": RELATIONS_SCHEMA,
}


def attribute_dicts(column: Any, index: pd.Index) -> pd.Series:
    """A concepts table's ``attributes`` as one ``dict`` per row (on ``index``): from dicts or
    Parquet's ``(key, value)`` pairs; ``None`` (a table without the column) or missing values
    → ``{}``."""
    values = [{} for _ in range(len(index))] if column is None else column
    dicts = [dict(v) if v is not None and len(v) else {} for v in values]
    return pd.Series(dicts, index=index, dtype=object)


def with_attributes(concepts: pd.DataFrame) -> pd.DataFrame:
    """``concepts`` itself when it has an ``attributes`` column, else a copy with empty ones
    (a table made before the column existed, or by hand)."""
    if "attributes" in concepts:
        return concepts
    return concepts.assign(attributes=attribute_dicts(None, concepts.index))


def table_fingerprint(folder: Path) -> str:
    """SHA-256 (16 hex chars) over the Parquet files' bytes, in table order."""
    return file_sha256(*(folder / f"{name}.parquet" for name in TABLES))


@dataclass
class KnowledgeGraph:
    """Concepts, their terms and the relations between them.

    ``card`` is the content of ``kg.json`` (empty for a KG built in memory and not saved).
    """

    concepts: pd.DataFrame
    terms: pd.DataFrame
    relations: pd.DataFrame
    card: dict[str, Any] = field(default_factory=dict)

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_records(
        cls,
        concepts: list[dict[str, Any]] | pd.DataFrame,
        terms: list[dict[str, Any]] | pd.DataFrame,
        relations: list[dict[str, Any]] | pd.DataFrame | None = None,
    ) -> KnowledgeGraph:
        """Build an in-memory KG from rows (dicts with the table columns); defaults filled."""
        c = pd.DataFrame(concepts)
        for col in ("semantic_types", "alt_ids"):
            if col not in c:
                c[col] = [[] for _ in range(len(c))]
        c["attributes"] = attribute_dicts(c.get("attributes"), c.index)
        t = pd.DataFrame(terms)
        for col, default in (("lang", "en"), ("source", ""), ("is_preferred", False)):
            if col not in t:
                t[col] = default
        r = pd.DataFrame(
            relations if relations is not None else [], columns=["head", "relation", "tail"]
        )
        return cls(
            concepts=c[list(CONCEPTS_SCHEMA.names)].reset_index(drop=True),
            terms=t[list(TERMS_SCHEMA.names)].reset_index(drop=True),
            relations=r[list(RELATIONS_SCHEMA.names)].reset_index(drop=True),
        )

    # ----------------------------------------------------------------- persistence
    def _write_tables(self, folder: Path) -> None:
        """The three Parquet tables into ``folder`` (the bytes :func:`table_fingerprint` hashes)."""
        for name, schema in TABLES.items():
            df: pd.DataFrame = getattr(self, name)
            df = with_attributes(df) if name == "concepts" else df
            table = pa.Table.from_pandas(df, schema=schema, preserve_index=False)
            pq.write_table(table, folder / f"{name}.parquet")

    def save(self, out: str | Path, card: dict[str, Any] | None = None) -> Path:
        """Write the tables and ``kg.json`` atomically; return the folder."""
        if len(self.concepts) == 0 or len(self.terms) == 0:
            raise EmptyResultError("refusing to save an empty KG (no concept or no term)")
        out = Path(out)
        with atomic_dir(out) as tmp:
            self._write_tables(tmp)
            full = dict(self.card)
            full.update(card or {})
            full["format_version"] = FORMAT_VERSION
            full["counts"] = self.counts()
            full["fingerprint"] = table_fingerprint(tmp)
            write_card(tmp, CARD_NAME, full)
        self.card = full
        return out

    @classmethod
    def load(cls, folder: str | Path) -> KnowledgeGraph:
        """Read a KG folder written by :meth:`save` or ``termnorm kg build``."""
        folder = Path(folder)
        card = read_card(folder, CARD_NAME, "kg")
        if card.get("format_version") != FORMAT_VERSION:
            raise ArtifactMismatchError(
                f"{folder} has KG format {card.get('format_version')}, this termnorm reads "
                f"{FORMAT_VERSION}; rebuild it with 'termnorm kg build'"
            )
        tables = {name: pq.read_table(folder / f"{name}.parquet").to_pandas() for name in TABLES}
        concepts = tables["concepts"]
        for name in ("semantic_types", "alt_ids"):
            concepts[name] = [list(v) for v in concepts[name]]
        concepts["attributes"] = attribute_dicts(concepts.get("attributes"), concepts.index)
        return cls(card=card, **tables)

    # ----------------------------------------------------------------- views
    @property
    def fingerprint(self) -> str:
        """Content fingerprint from the card (``""`` for an unsaved KG)."""
        return str(self.card.get("fingerprint", ""))

    def content_fingerprint(self) -> str:
        """:attr:`fingerprint`, or for an unsaved KG the one :meth:`save` would write (its
        tables written to a temporary folder and hashed), so that an index built from a KG in
        memory (the default index) still names its KG."""
        if self.fingerprint:
            return self.fingerprint
        with tempfile.TemporaryDirectory(prefix="termnorm-kg-") as tmp:
            self._write_tables(Path(tmp))
            return table_fingerprint(Path(tmp))

    def counts(self) -> dict[str, int]:
        """Row counts of the three tables plus the number of relation labels."""
        return {
            "concepts": len(self.concepts),
            "terms": len(self.terms),
            "relations": len(self.relations),
            "relation_labels": int(self.relations["relation"].nunique()),
        }

    def concept_names(self) -> dict[str, str]:
        """``concept_id -> name``."""
        return dict(zip(self.concepts["concept_id"], self.concepts["name"], strict=True))

    def terms_by_concept(self) -> dict[str, list[str]]:
        """``concept_id -> [term, ...]`` in table order."""
        out: dict[str, list[str]] = {}
        for cid, term in zip(self.terms["concept_id"], self.terms["term"], strict=True):
            out.setdefault(cid, []).append(term)
        return out
