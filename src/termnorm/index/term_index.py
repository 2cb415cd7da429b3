"""The saved term index: term vectors ("T"), concept mean vectors ("C"), tables and a card.

On disk an index is a folder, written atomically::

    index.json            model (path, fingerprint, pooling, max_length, dimension), KG
                          (path, fingerprint), backends, counts, termnorm version, content
                          hashes of the tables ("tables") and of the vector files
                          ("vectors.sha256"), checked on load (:mod:`termnorm.index.integrity`)
    terms.parquet         concept_id, term, source, is_preferred
                                                        row i  <-> term_vectors[i]
    concepts.parquet      concept_id, name, semantic_types, alt_ids, attributes (an index
                          written before the column existed reads as empty attributes)
                                                        row j  <-> concept_vectors[j]
    relations.parquet     head, relation, tail: the KG's edges between concepts of the index
                          (format 3; read on the first lookup that needs it)
    term_vectors.npy      float16 [n_terms, d], L2-normalised (NaN / zero vectors are refused
                          at build time); memory-mapped at load (:mod:`termnorm.index.vectors`)
    concept_vectors.npy   float16 [n_concepts, d]: normalised mean of the concept's term vectors
    term_index/, concept_index/   faiss files (only for faiss backends)

Builds encode the distinct strings shard by shard straight into the float16 term matrix
(:mod:`termnorm.index.encoding`) and fill the backends block by block
(:func:`termnorm.index.factory.build_vector_index`); the card also records the memory budget,
each space's backend with its reason and bytes, and the build's engine, device and shards.
Loading never re-encodes. It refuses a format this termnorm does not read (format 2 loads,
its concepts answering ``relations=None``), a damaged file, and a file whose content hash
differs from the card's (:mod:`termnorm.index.integrity`). Indexes written before float16
storage load and search as they did. An index is never modified after it is built: domain
synonyms are searched beside it (:class:`termnorm.search.SearchSpace`).
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from termnorm._artifacts import atomic_dir, file_sha256, read_card, write_card
from termnorm._version import __version__
from termnorm.encoders.fidelity import runtime_record
from termnorm.encoders.protocols import Encoder
from termnorm.errors import ArtifactMismatchError
from termnorm.index.base import Backend, SearchResult, VectorIndex, as_matrix
from termnorm.index.choose import BackendSpec, default_memory_budget, estimate_bytes
from termnorm.index.encoding import LocalEngine, ShardEngine, stream_term_vectors
from termnorm.index.exact import rerank_exact
from termnorm.index.factory import build_vector_index, load_vector_index, resolve_backend
from termnorm.index.integrity import damaged, vector_digests, verify_tables, verify_vectors
from termnorm.index.lookup import (
    ConceptInfo,
    RelationInfo,
    RelationLookup,
    TermInfo,
    UnknownConceptError,
    id_key_map,
)
from termnorm.index.shards import DEFAULT_SHARD_SIZE, Shard, ShardStore, plan_shards
from termnorm.index.tables import (
    RELATION_COLUMNS,
    TERM_COLUMNS,
    IndexTables,
    concept_means,
    index_tables,
)
from termnorm.index.vectors import STORAGE_DTYPE
from termnorm.kg import KnowledgeGraph
from termnorm.kg.graph import CONCEPTS_SCHEMA, RELATIONS_SCHEMA, attribute_dicts, with_attributes
from termnorm.kg.graph import TERMS_SCHEMA as KG_TERMS_SCHEMA
from termnorm.kg.ids import id_key

if TYPE_CHECKING:  # torch is imported only when an encoder is loaded
    from termnorm.encoders import TermEncoder

__all__ = [
    "CARD_NAME",
    "FORMAT_VERSION",
    "READABLE_FORMATS",
    "Encoder",
    "TermIndex",
    "backend_search",
]

logger = logging.getLogger(__name__)

CARD_NAME = "index.json"
FORMAT_VERSION = 3  # 2: terms carry their KG source and is_preferred; 3: relations.parquet
READABLE_FORMATS = (2, 3)
RELATIONS_FROM = 3  # the first format that stores the KG's relations
# the KG's schemas; an index's terms have no ``lang``
TERMS_SCHEMA = pa.schema([KG_TERMS_SCHEMA.field(name) for name in TERM_COLUMNS])
_SPACES = {"terms": "term_index", "concepts": "concept_index"}
_TABLES = ("terms.parquet", "concepts.parquet")  # read at load
_RELATIONS = "relations.parquet"  # read on first use
# every table's content hash goes into the card
# IVF kinds: candidates fetched per wanted hit, then re-scored exactly against the float16
# vectors. 10, not 4: on 1 M synthetic vectors (benchmarks/scale.py, IVF1024-PQ64) ×10 raised
# recall@10 from 0.955 to 0.960 (nprobe 16) and 0.980 to 0.987 (nprobe 64) for +0.1-1.1 ms p50
RERANK_FACTOR = 10


def backend_search(
    index: VectorIndex, vectors: np.ndarray, queries: np.ndarray, k: int
) -> SearchResult:
    """Top-``k`` of ``index`` (holding ``vectors``); IVF kinds over-fetch (``rerank`` times
    ``k``, default :data:`RERANK_FACTOR`) and re-score against ``vectors`` exactly."""
    if not index.backend.is_ivf:
        return index.search(queries, k)
    factor = int(getattr(index, "params", {}).get("rerank", RERANK_FACTOR))
    rough = index.search(queries, max(1, min(len(vectors), k * factor)))
    return rerank_exact(vectors, queries, rough, k)


def _read_table(path: Path) -> pd.DataFrame:
    """A Parquet table of the index folder; an unreadable one is :func:`.integrity.damaged`."""
    try:
        return pq.read_table(path).to_pandas()
    except (OSError, pa.ArrowException) as exc:
        raise damaged(path, exc) from exc


class TermIndex:
    """Searchable term and concept vectors of one KG under one encoder.

    Public attributes (read them, do not modify them in place):

    * ``terms`` (concept_id, term, source, is_preferred): row ``i`` is id ``i`` of
      :meth:`search_terms`, with vector ``term_vectors[i]``;
    * ``term_concept``: the row in ``concepts`` of each term's concept;
    * ``concepts`` (concept_id, name, semantic_types, alt_ids): row ``j`` is id ``j`` of
      :meth:`search_concepts`, with vector ``concept_vectors[j]``;
    * :attr:`relations` (head, relation, tail), read from the folder on first use; ``None``
      for a format-2 index;
    * ``card`` (the ``index.json`` content) and ``path`` (``None`` until saved or when built
      in memory).
    """

    def __init__(
        self,
        terms: pd.DataFrame,
        concepts: pd.DataFrame,
        term_vectors: np.ndarray,
        concept_vectors: np.ndarray,
        card: dict[str, Any],
        term_backend: BackendSpec,
        concept_backend: BackendSpec,
        folder: Path | None = None,
        relations: pd.DataFrame | None = None,
    ) -> None:
        self.terms = terms.reset_index(drop=True)
        self.concepts = concepts.reset_index(drop=True)
        self.term_vectors = term_vectors
        self.concept_vectors = concept_vectors
        self.card = card
        self.path = folder
        self._concept_row = {cid: i for i, cid in enumerate(self.concepts["concept_id"])}
        self.term_concept = self.terms["concept_id"].map(self._concept_row).to_numpy(np.int64)
        self._specs = {"terms": term_backend, "concepts": concept_backend}
        self._id_keys: dict[str, int] | None = None  # built on the first lookup by ID
        self._term_order: np.ndarray | None = None  # term rows grouped by concept, idem
        self._relations = relations  # None when saved: read on first use
        self._neighbours: RelationLookup | None = None  # built on the first lookup by ID
        if folder is None:
            self._term_index = build_vector_index(term_backend, term_vectors)
            self._concept_index = build_vector_index(concept_backend, concept_vectors)
            spaces = (("terms", self._term_index), ("concepts", self._concept_index))
            for space, index in spaces if "backend" in card else ():
                entry = card["backend"][space]
                # IVF-PQ sizes itself to its training set: record what was actually built
                params = getattr(index, "params", None)
                if params is not None:
                    entry["params"] = dict(params)
                n, dim = len(index), int(term_vectors.shape[1])
                entry["estimated_bytes"] = estimate_bytes(index.backend, n, dim, entry["params"])
                entry["actual_bytes"] = index.nbytes
        else:
            self._term_index = load_vector_index(term_backend, folder / "term_index", term_vectors)
            self._concept_index = load_vector_index(
                concept_backend, folder / "concept_index", concept_vectors
            )

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        kg: KnowledgeGraph,
        encoder: Encoder,
        backend: Backend | str = Backend.AUTO,
        memory_budget: int | None = None,
        batch_size: int = 256,
        show_progress: bool = True,
        kg_path: str | Path | None = None,
        chunk_size: int = DEFAULT_SHARD_SIZE,
    ) -> TermIndex:
        """Encode every KG term once (duplicate strings once) and index terms and concepts.

        ``backend="auto"`` picks per space from its size, the dimension and
        ``memory_budget`` bytes (default: half of this machine's memory), see
        :func:`termnorm.index.choose_backend`; a named backend is checked against the budget
        (:func:`termnorm.index.factory.resolve_backend`). The budget, the choice, its reason
        and the estimated and actual bytes go into the card. Strings are encoded in this
        process, in shards of ``chunk_size`` (:mod:`termnorm.index.encoding`; builds that
        use Ray workers or resume: :func:`termnorm.index.build.build_index_folder`).
        """
        tables = index_tables(kg)
        shards = plan_shards(len(tables.uniques), chunk_size)
        return cls.from_tables(
            tables,
            kg,
            encoder,
            shards,
            LocalEngine(encoder, batch_size),
            None,
            backend,
            memory_budget,
            show_progress,
            kg_path,
        )

    @classmethod
    def from_tables(
        cls,
        tables: IndexTables,
        kg: KnowledgeGraph,
        encoder: Encoder,
        shards: list[Shard],
        engine: ShardEngine,
        store: ShardStore | None = None,
        backend: Backend | str = Backend.AUTO,
        memory_budget: int | None = None,
        show_progress: bool = True,
        kg_path: str | Path | None = None,
    ) -> TermIndex:
        """The index of ``kg``'s ``tables``: the strings' ``shards`` come from ``store``
        when it holds them, else from ``engine`` (:func:`stream_term_vectors`); ``encoder``
        describes the model in the card (its fingerprint, dimension and runtime)."""
        terms, concepts = tables.terms, tables.concepts
        dim = int(encoder.dimension)
        budget = default_memory_budget() if memory_budget is None else memory_budget
        term_spec = resolve_backend(backend, len(terms), dim, budget)
        concept_spec = resolve_backend(backend, len(concepts), dim, budget)
        logger.info("backends: terms %s, concepts %s", term_spec, concept_spec)
        logger.info("encoding %d distinct strings of %d terms", len(tables.uniques), len(terms))
        term_vectors, streamed = stream_term_vectors(
            tables.codes, tables.uniques, dim, shards, engine, store, show_progress
        )
        row = {cid: i for i, cid in enumerate(concepts["concept_id"])}
        means = concept_means(
            term_vectors, terms["concept_id"].map(row).to_numpy(np.int64), len(concepts)
        )
        concept_vectors = means.astype(STORAGE_DTYPE)
        del means
        card = {
            "format_version": FORMAT_VERSION,
            "termnorm_version": __version__,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "model": {
                # resolved: the index must work from any working folder
                "path": str(Path(encoder.path).resolve()) if encoder.path is not None else None,
                "fingerprint": encoder.fingerprint,
                "pooling": encoder.pooling.value,
                "max_length": encoder.max_length,
                "dimension": dim,
                **runtime_record(encoder),
            },
            "kg": {
                "path": str(Path(kg_path).resolve()) if kg_path is not None else None,
                "fingerprint": kg.content_fingerprint(),
                "sources": kg.card.get("sources"),
            },
            "backend": {"terms": term_spec.to_dict(), "concepts": concept_spec.to_dict()},
            "memory_budget": budget,
            "vectors": {"dtype": STORAGE_DTYPE.name},
            "build": {
                **engine.describe(),
                "shard_size": max((len(s) for s in shards), default=0),
                "shards": len(shards),
                "resumed_shards": streamed.resumed,
            },
            "counts": dict(tables.counts),
        }
        return cls(
            terms,
            concepts,
            term_vectors,
            concept_vectors,
            card,
            term_spec,
            concept_spec,
            relations=tables.relations,
        )

    # ------------------------------------------------------------------ persistence
    def save(self, out: str | Path) -> Path:
        """Write the index folder atomically."""
        out = Path(out)
        relations = self.relations  # a loaded index reads them before the folder is replaced
        if relations is None and self.card.get("format_version", 0) >= RELATIONS_FROM:
            raise ValueError(
                f"this index's card says format {self.card['format_version']}, which holds the "
                "KG's relations, but it has none: build it with TermIndex.build, or pass "
                "relations=relation_table(kg, concepts)[0] to TermIndex"
            )
        frames = {
            "terms.parquet": (self.terms[TERM_COLUMNS], TERMS_SCHEMA),
            "concepts.parquet": (with_attributes(self.concepts), CONCEPTS_SCHEMA),
        }
        if relations is not None:
            frames[_RELATIONS] = (relations[RELATION_COLUMNS], RELATIONS_SCHEMA)
        with atomic_dir(out) as tmp:
            for name, (frame, schema) in frames.items():
                pq.write_table(pa.Table.from_pandas(frame, schema, False), tmp / name)
            self.card["tables"] = {name: file_sha256(tmp / name) for name in frames}
            np.save(tmp / "term_vectors.npy", np.asarray(self.term_vectors))
            np.save(tmp / "concept_vectors.npy", np.asarray(self.concept_vectors))
            for space, index in (("terms", self._term_index), ("concepts", self._concept_index)):
                if self._specs[space].backend is not Backend.EXACT:
                    index.save(tmp / _SPACES[space])
            self.card.setdefault("vectors", {})["sha256"] = vector_digests(tmp)
            write_card(tmp, CARD_NAME, self.card)
        self.path = out
        return out

    @classmethod
    def load(cls, folder: str | Path, mmap: bool = True) -> TermIndex:
        """Read an index folder (vectors memory-mapped by default); nothing is re-encoded."""
        folder = Path(folder)
        card = read_card(folder, CARD_NAME, "index")
        version = card.get("format_version")
        if version not in READABLE_FORMATS:
            raise ArtifactMismatchError(
                f"{folder} has index format {version}, this termnorm reads "
                f"{' and '.join(map(str, READABLE_FORMATS))}; rebuild it with "
                "'termnorm index build'"
            )
        mode: Literal["r"] | None = "r" if mmap else None
        hashed = card.get("tables", {})
        if version >= RELATIONS_FROM and hashed and _RELATIONS not in hashed:
            raise damaged(folder / CARD_NAME, f"no content hash for {_RELATIONS}")
        verify_tables(folder, card)
        terms, concepts = (_read_table(folder / name) for name in _TABLES)
        for col in ("semantic_types", "alt_ids"):
            concepts[col] = [list(v) for v in concepts[col]]
        concepts["attributes"] = attribute_dicts(concepts.get("attributes"), concepts.index)
        vectors = {}
        for name in ("term_vectors.npy", "concept_vectors.npy"):
            try:
                vectors[name] = np.load(folder / name, mmap_mode=mode)
            except (OSError, ValueError, EOFError) as exc:
                raise damaged(folder / name, exc) from exc
        term_vectors, concept_vectors = vectors["term_vectors.npy"], vectors["concept_vectors.npy"]
        if len(term_vectors) != len(terms) or len(concept_vectors) != len(concepts):
            raise damaged(folder, "vectors and tables disagree in length")
        verify_vectors(folder, card, vectors)
        try:
            specs = {k: BackendSpec.from_dict(v) for k, v in card["backend"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise damaged(folder / CARD_NAME, f"bad 'backend' entry: {exc!r}") from exc
        return cls(
            terms,
            concepts,
            term_vectors,
            concept_vectors,
            card,
            specs["terms"],
            specs["concepts"],
            folder=folder,
        )

    # ------------------------------------------------------------------ encoder identity
    @property
    def dimension(self) -> int:
        """Vector size."""
        return int(self.card["model"]["dimension"])

    def check_encoder(self, encoder: Encoder) -> None:
        """Refuse a query encoder other than the one the index was built with."""
        model = self.card["model"]
        if encoder.fingerprint != model["fingerprint"] or encoder.dimension != self.dimension:
            raise ArtifactMismatchError(
                f"index {self.path or '(in memory)'} was built with model {model['path']} "
                f"(fingerprint {model['fingerprint']}, pooling {model['pooling']}), but the "
                f"query encoder is {encoder.path} (fingerprint {encoder.fingerprint}, pooling "
                f"{encoder.pooling.value}); query with the same model and pooling, or rebuild "
                "the index with 'termnorm index build --model ...'"
            )
        if encoder.max_length != model["max_length"]:
            logger.warning(
                "query max_length %d differs from the index's %d",
                encoder.max_length,
                model["max_length"],
            )

    def load_encoder(
        self, model: str | Path | None = None, device: str | None = None
    ) -> TermEncoder:
        """The index's encoder (from ``model`` or the card's model path), checked.

        A model folder that moved since the build: pass its new place as ``model`` (CLI
        ``--model``); its fingerprint must still match the card's.
        """
        recorded = self.card["model"]["path"]
        path = Path(model) if model is not None else Path(recorded or "")
        if model is None and (recorded is None or not (path / "config.json").is_file()):
            raise ArtifactMismatchError(
                f"the model {recorded} recorded in {self.path}/{CARD_NAME} is not there any "
                "more; pass the model folder explicitly: termnorm normalize --model DIR "
                "(API: search_space(index, model=DIR) / get_normalizer(index, model=DIR))"
            )
        from termnorm.encoders import TermEncoder

        card = self.card["model"]
        encoder = TermEncoder.load(
            path, pooling=card["pooling"], max_length=card["max_length"], device=device
        )
        self.check_encoder(encoder)
        return encoder

    # ------------------------------------------------------------------ search
    def search_terms(self, query_vectors: np.ndarray, k: int) -> SearchResult:
        """Top-``k`` term rows (ids into :attr:`terms`) per query vector."""
        q = as_matrix(query_vectors, self.dimension)
        return backend_search(self._term_index, self.term_vectors, q, k)

    def search_concepts(self, query_vectors: np.ndarray, k: int) -> SearchResult:
        """Top-``k`` concept rows (ids into :attr:`concepts`) per query vector."""
        q = as_matrix(query_vectors, self.dimension)
        return backend_search(self._concept_index, self.concept_vectors, q, k)

    # ------------------------------------------------------------------ lookups
    def concept_row(self, concept_id: str) -> int:
        """Row of ``concept_id`` in :attr:`concepts` (``KeyError`` if absent)."""
        return self._concept_row[concept_id]

    def alt_ids(self, concept_id: str) -> list[str]:
        """Alternative IDs of a concept (empty for an unknown ID)."""
        row = self._concept_row.get(concept_id)
        return [] if row is None else list(self.concepts["alt_ids"].iloc[row])

    def resolve_id(self, concept_id: str) -> int | None:
        """Row in :attr:`concepts` of the concept ``concept_id`` names, by its own ID or an
        alternative one (:mod:`termnorm.index.lookup`); ``None`` when none does."""
        row = self._concept_row.get(concept_id)
        if row is not None:
            return row
        if self._id_keys is None:
            self._id_keys = id_key_map(
                self.concepts["concept_id"].astype(str).tolist(), self.concepts["alt_ids"].tolist()
            )
        return self._id_keys.get(id_key(concept_id))

    @property
    def relations(self) -> pd.DataFrame | None:
        """The KG's ``head, relation, tail`` edges between concepts of the index (read from
        the folder on first use, its content hash checked at load); ``None`` for an index
        of format 2, built before indexes held them."""
        if self._relations is None and self.path is not None:
            if self.card.get("format_version", 0) < RELATIONS_FROM:
                return None
            path = self.path / _RELATIONS
            self._relations = _read_table(path)
            missing = set(RELATION_COLUMNS) - set(self._relations.columns)
            if missing:
                raise damaged(path, f"no column(s) {sorted(missing)}")
        return self._relations

    def neighbours(self, row: int) -> tuple[RelationInfo, ...] | None:
        """The KG edges of the concept at ``row`` (outgoing first; see
        :class:`~termnorm.index.lookup.RelationLookup`), ``None`` for a format-2 index."""
        if self._neighbours is None:
            relations = self.relations
            if relations is None:
                return None
            where = f"index {self.path or '(in memory)'}"
            self._neighbours = RelationLookup(relations, self.concepts, self._concept_row, where)
        return self._neighbours.of(row)

    def concept(self, concept_id: str) -> ConceptInfo:
        """The concept ``concept_id`` names (alternative IDs resolve too) with its terms and
        KG relations (``relations=None`` for a format-2 index: rebuild it to have them);
        :class:`~termnorm.index.lookup.UnknownConceptError` when there is none."""
        row = self.resolve_id(concept_id)
        if row is None:
            raise UnknownConceptError(concept_id, f"index {self.path or '(in memory)'}")
        if self._term_order is None:
            self._term_order = np.argsort(self.term_concept, kind="stable")
        order = self._term_order
        lo, hi = np.searchsorted(self.term_concept[order], [row, row + 1])
        terms = self.terms.iloc[order[lo:hi]]
        concept = self.concepts.iloc[row]
        return ConceptInfo(
            concept_id=str(concept["concept_id"]),
            name=str(concept["name"]),
            semantic_types=tuple(str(t) for t in concept["semantic_types"]),
            alt_ids=tuple(str(a) for a in concept["alt_ids"]),
            attributes=dict(concept.get("attributes") or {}),
            synonyms=tuple(
                TermInfo(str(t), str(src), bool(pref))
                for t, src, pref in zip(
                    terms["term"], terms["source"], terms["is_preferred"], strict=True
                )
            ),
            relations=self.neighbours(row),
        )

    def info(self) -> dict[str, Any]:
        """The card plus the folder, for ``termnorm index info``."""
        return {"path": str(self.path) if self.path else None, **self.card}
