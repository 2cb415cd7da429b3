"""Write a record stream straight to a KG folder, in Parquet chunks (bounded memory).

Used for sources too large to hold in memory (the full UMLS). The stream must be
*stream-safe*: each concept yielded once and immediately followed by its terms, and
relations only between yielded concepts, with no repeats — what
:func:`termnorm.kg.umls.load_umls` guarantees. The folder has the same tables, schemas and
``kg.json`` card (``format_version``, ``counts``, ``fingerprint``) as
:meth:`termnorm.kg.graph.KnowledgeGraph.save`, and is written atomically.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from termnorm._artifacts import atomic_dir, write_card
from termnorm.errors import EmptyResultError
from termnorm.kg._text import Record
from termnorm.kg.graph import CARD_NAME, FORMAT_VERSION, TABLES, table_fingerprint
from termnorm.kg.records import Concept, Term

DEFAULT_CHUNK_ROWS = 200_000


class _ChunkedTable:
    """Column buffers for one table, flushed to a ParquetWriter every ``chunk_rows`` rows."""

    def __init__(self, path: Path, schema: pa.Schema, chunk_rows: int) -> None:
        self.schema = schema
        self.writer = pq.ParquetWriter(path, schema)
        self.columns: dict[str, list[Any]] = {name: [] for name in schema.names}
        self.chunk_rows = chunk_rows
        self.rows = 0

    def add(self, *values: Any) -> None:
        """Append one row (values in schema order)."""
        for column, value in zip(self.columns.values(), values, strict=True):
            column.append(value)
        self.rows += 1
        if len(next(iter(self.columns.values()))) >= self.chunk_rows:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as one row group."""
        if next(iter(self.columns.values())):
            self.writer.write_table(pa.Table.from_pydict(self.columns, schema=self.schema))
            for column in self.columns.values():
                column.clear()


def write_records(
    records: Iterable[Record],
    out: str | Path,
    card: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> dict[str, Any]:
    """Consume a stream-safe record stream into the KG folder ``out``; return its card.

    ``card`` (or, when callable, what it returns once the stream is consumed — e.g. the
    loaders' final reports) is written to ``kg.json`` with the counts and fingerprint.

    Raises :class:`EmptyResultError` (leaving ``out`` untouched) when no concept or no term
    was written.
    """
    out = Path(out)
    labels: set[str] = set()
    with atomic_dir(out) as tmp:
        with contextlib.ExitStack() as stack:
            tables = {
                name: _ChunkedTable(tmp / f"{name}.parquet", schema, chunk_rows)
                for name, schema in TABLES.items()
            }
            for table in tables.values():
                stack.callback(table.writer.close)
            concepts, terms, relations = tables["concepts"], tables["terms"], tables["relations"]
            last_concept = ""
            for record in records:
                if isinstance(record, Concept):
                    last_concept = record.concept_id
                    concepts.add(
                        record.concept_id,
                        record.name,
                        list(record.semantic_types),
                        list(record.alt_ids),
                        list(record.attributes),
                    )
                elif isinstance(record, Term):
                    if record.concept_id != last_concept:
                        raise RuntimeError(
                            f"stream not stream-safe: term of {record.concept_id} "
                            f"after concept {last_concept or '(none)'}"
                        )
                    terms.add(
                        record.concept_id,
                        record.term,
                        record.lang,
                        record.source,
                        record.is_preferred,
                    )
                else:
                    labels.add(record.relation)
                    relations.add(record.head, record.relation, record.tail)
            for table in tables.values():
                table.flush()
        if concepts.rows == 0 or terms.rows == 0:
            raise EmptyResultError("no concept or no term left after loading; check the filters")
        full = dict(card() if callable(card) else card or {})
        full["format_version"] = FORMAT_VERSION
        full["counts"] = {
            "concepts": concepts.rows,
            "terms": terms.rows,
            "relations": relations.rows,
            "relation_labels": len(labels),
        }
        full["fingerprint"] = table_fingerprint(tmp)
        write_card(tmp, CARD_NAME, full)
    return full
