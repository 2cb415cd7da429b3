"""The saved term index: term vectors ("T"), concept mean vectors ("C"), tables and a card.

On disk an index is a folder, written atomically::

    index.json            model (path, fingerprint, pooling, max_length, dimension), KG
                          (path, fingerprint), backends, counts, termnorm version
    terms.parquet         concept_id, term              row i  <-> term_vectors[i]
    concepts.parquet      concept_id, name, semantic_types, alt_ids
                                                        row j  <-> concept_vectors[j]
    term_vectors.npy      float32 [n_terms, d], L2-normalised
    concept_vectors.npy   float32 [n_concepts, d]: normalised mean of the concept's term vectors
    term_index/, concept_index/   faiss files (only for faiss backends)

Loading never re-encodes. With IVF-PQ the compressed search over-fetches and the candidates
are re-scored against the (memory-mapped) exact vectors, so scores are true cosines. Extra texts (e.g. domain synonyms) can be attached to a loaded
index with :meth:`TermIndex.add_terms`; they are searched with the ontology's terms but kept
in memory only. Any other matrix can be searched with :meth:`TermIndex.search_matrix`.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import termnorm
from termnorm._artifacts import atomic_dir, read_card, write_card
from termnorm.errors import ArtifactMismatchError, EmptyResultError
from termnorm.index.base import Backend, SearchResult, as_matrix
from termnorm.index.choose import BackendSpec, default_memory_budget
from termnorm.index.exact import ExactIndex, exact_search, merge_results, rerank_exact
from termnorm.index.factory import build_vector_index, load_vector_index, resolve_backend
from termnorm.index.tables import concept_means, concept_table, term_table
from termnorm.kg import KnowledgeGraph

if TYPE_CHECKING:  # torch is imported only when an encoder is loaded
    from termnorm.encoders import Pooling, TermEncoder

__all__ = ["CARD_NAME", "FORMAT_VERSION", "Encoder", "TermIndex"]

logger = logging.getLogger(__name__)

CARD_NAME = "index.json"
FORMAT_VERSION = 1
TERMS_SCHEMA = pa.schema([("concept_id", pa.string()), ("term", pa.string())])
CONCEPTS_SCHEMA = pa.schema(
    [
        ("concept_id", pa.string()),
        ("name", pa.string()),
        ("semantic_types", pa.list_(pa.string())),
        ("alt_ids", pa.list_(pa.string())),
    ]
)
_SPACES = {"terms": "term_index", "concepts": "concept_index"}
RERANK_FACTOR = 4  # IVF-PQ: candidates fetched per wanted hit, then re-scored exactly


class Encoder(Protocol):
    """What an index needs from an encoder (:class:`termnorm.encoders.TermEncoder` fits)."""

    path: Path | None
    pooling: Pooling
    max_length: int

    @property
    def fingerprint(self) -> str:
        """Identity of weights + pooling."""
        ...

    @property
    def dimension(self) -> int:
        """Vector size."""
        ...

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = ...,
        show_progress: bool = ...,
        desc: str = ...,
    ) -> np.ndarray:
        """L2-normalised float32 vectors ``[len(texts), d]``."""
        ...


class TermIndex:
    """Searchable term and concept vectors of one KG under one encoder.

    Public attributes (read them, do not modify them in place):

    * ``terms`` (concept_id, term): row ``i`` is id ``i`` of :meth:`search_terms`
      (ontology terms first, then any added with :meth:`add_terms`);
    * ``term_vectors`` ``[n_ontology_terms, d]`` and ``term_concept`` (row of each term's
      concept in ``concepts``, extra terms included);
    * ``concepts`` (concept_id, name, semantic_types, alt_ids): row ``j`` is id ``j`` of
      :meth:`search_concepts`, with vector ``concept_vectors[j]``;
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
        self._extra = ExactIndex(self.dimension)
        self._n_base_terms = len(self.terms)
        if folder is None:
            self._term_index = build_vector_index(term_backend, term_vectors)
            self._concept_index = build_vector_index(concept_backend, concept_vectors)
            for space, index in (("terms", self._term_index), ("concepts", self._concept_index)):
                # IVF-PQ sizes itself to its training set: record what was actually built
                params = getattr(index, "params", None)
                if params is not None and "backend" in card:
                    card["backend"][space]["params"] = dict(params)
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
    ) -> TermIndex:
        """Encode every KG term once (duplicate strings once) and index terms and concepts.

        ``backend="auto"`` picks per space from its size, the dimension and
        ``memory_budget`` bytes (default: half of this machine's memory), see
        :func:`termnorm.index.choose_backend`; the choice and its reason go into the card.
        """
        concepts, concept_counts = concept_table(kg)
        terms, term_counts = term_table(kg, concepts)
        if len(terms) == 0:
            raise EmptyResultError("the KG has no usable term; nothing to index")
        codes, uniques = pd.factorize(terms["term"])
        logger.info("encoding %d distinct strings of %d terms", len(uniques), len(terms))
        unique_vectors = encoder.encode(
            list(uniques), batch_size=batch_size, show_progress=show_progress, desc="terms"
        )
        distinct = len(uniques) == len(terms)  # then codes is 0..n-1: no copy needed
        term_vectors = unique_vectors if distinct else unique_vectors[codes]
        row = {cid: i for i, cid in enumerate(concepts["concept_id"])}
        concept_vectors = concept_means(
            term_vectors, terms["concept_id"].map(row).to_numpy(np.int64), len(concepts)
        )
        dim = int(term_vectors.shape[1])
        budget = default_memory_budget() if memory_budget is None else memory_budget
        term_spec = resolve_backend(backend, len(terms), dim, budget)
        concept_spec = resolve_backend(backend, len(concepts), dim, budget)
        logger.info("backends: terms %s, concepts %s", term_spec, concept_spec)
        card = {
            "format_version": FORMAT_VERSION,
            "termnorm_version": termnorm.__version__,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "model": {
                "path": str(encoder.path) if encoder.path is not None else None,
                "fingerprint": encoder.fingerprint,
                "pooling": encoder.pooling.value,
                "max_length": encoder.max_length,
                "dimension": dim,
            },
            "kg": {
                "path": str(Path(kg_path).resolve()) if kg_path is not None else None,
                "fingerprint": kg.fingerprint,
                "sources": kg.card.get("sources"),
            },
            "backend": {"terms": term_spec.to_dict(), "concepts": concept_spec.to_dict()},
            "memory_budget": budget,
            "counts": {
                "terms": len(terms),
                "distinct_strings": len(uniques),
                "concepts": len(concepts),
                **term_counts,
                **concept_counts,
            },
        }
        return cls(terms, concepts, term_vectors, concept_vectors, card, term_spec, concept_spec)

    # ------------------------------------------------------------------ persistence
    def save(self, out: str | Path) -> Path:
        """Write the index folder atomically (terms added with :meth:`add_terms` excluded)."""
        if len(self._extra):
            logger.warning("not saving %d terms added at search time", len(self._extra))
        out = Path(out)
        with atomic_dir(out) as tmp:
            base_terms = self.terms.iloc[: self._n_base_terms]
            pq.write_table(
                pa.Table.from_pandas(base_terms, TERMS_SCHEMA, False), tmp / "terms.parquet"
            )
            pq.write_table(
                pa.Table.from_pandas(self.concepts, CONCEPTS_SCHEMA, False),
                tmp / "concepts.parquet",
            )
            np.save(tmp / "term_vectors.npy", np.asarray(self.term_vectors))
            np.save(tmp / "concept_vectors.npy", np.asarray(self.concept_vectors))
            for space, index in (("terms", self._term_index), ("concepts", self._concept_index)):
                if self._specs[space].backend is not Backend.EXACT:
                    index.save(tmp / _SPACES[space])
            write_card(tmp, CARD_NAME, self.card)
        self.path = out
        return out

    @classmethod
    def load(cls, folder: str | Path, mmap: bool = True) -> TermIndex:
        """Read an index folder (vectors memory-mapped by default); nothing is re-encoded."""
        folder = Path(folder)
        card = read_card(folder, CARD_NAME, "index")
        if card.get("format_version") != FORMAT_VERSION:
            raise ArtifactMismatchError(
                f"{folder} has index format {card.get('format_version')}, this termnorm reads "
                f"{FORMAT_VERSION}; rebuild it with 'termnorm index build'"
            )
        mode: Literal["r"] | None = "r" if mmap else None
        terms = pq.read_table(folder / "terms.parquet").to_pandas()
        concepts = pq.read_table(folder / "concepts.parquet").to_pandas()
        for col in ("semantic_types", "alt_ids"):
            concepts[col] = [list(v) for v in concepts[col]]
        term_vectors = np.load(folder / "term_vectors.npy", mmap_mode=mode)
        concept_vectors = np.load(folder / "concept_vectors.npy", mmap_mode=mode)
        if len(term_vectors) != len(terms) or len(concept_vectors) != len(concepts):
            raise ArtifactMismatchError(f"{folder} is damaged (vectors and tables disagree)")
        specs = {k: BackendSpec.from_dict(v) for k, v in card["backend"].items()}
        return cls(
            terms, concepts, term_vectors, concept_vectors, card,
            specs["terms"], specs["concepts"], folder=folder,
        )  # fmt: skip

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
        """The index's encoder (from ``model`` or the card's model path), checked."""
        path = Path(model) if model is not None else Path(self.card["model"]["path"] or "")
        if model is None and not (path / "config.json").is_file():
            raise ArtifactMismatchError(
                f"the model {path} recorded in {self.path}/{CARD_NAME} is not there any more; "
                "pass the model folder explicitly (--model / model=)"
            )
        from termnorm.encoders import TermEncoder

        card = self.card["model"]
        encoder = TermEncoder.load(
            path, pooling=card["pooling"], max_length=card["max_length"], device=device
        )
        self.check_encoder(encoder)
        return encoder

    # ------------------------------------------------------------------ search
    def _search(self, space: str, q: np.ndarray, k: int) -> SearchResult:
        """Backend search; IVF-PQ over-fetches and re-scores against the exact vectors."""
        index = self._term_index if space == "terms" else self._concept_index
        if self._specs[space].backend is not Backend.FAISS_IVFPQ:
            return index.search(q, k)
        vectors = self.term_vectors if space == "terms" else self.concept_vectors
        rough = index.search(q, max(1, min(len(vectors), k * RERANK_FACTOR)))
        return rerank_exact(vectors, q, rough, k)

    def search_terms(self, query_vectors: np.ndarray, k: int) -> SearchResult:
        """Top-``k`` term rows (ids into :attr:`terms`) per query vector."""
        q = as_matrix(query_vectors, self.dimension)
        result = self._search("terms", q, k)
        if len(self._extra):
            extra = self._extra.search(q, k)
            shifted = np.where(extra.ids >= 0, extra.ids + self._n_base_terms, extra.ids)
            result = merge_results(result, SearchResult(extra.scores, shifted), k)
        return result

    def search_concepts(self, query_vectors: np.ndarray, k: int) -> SearchResult:
        """Top-``k`` concept rows (ids into :attr:`concepts`) per query vector."""
        return self._search("concepts", as_matrix(query_vectors, self.dimension), k)

    @staticmethod
    def search_matrix(vectors: np.ndarray, query_vectors: np.ndarray, k: int) -> SearchResult:
        """Exact top-``k`` rows of any ``vectors`` matrix (e.g. extra synonyms' vectors)."""
        return exact_search(vectors, query_vectors, k)

    def add_terms(self, concept_ids: list[str], terms: list[str], vectors: np.ndarray) -> None:
        """Attach extra terms of existing concepts, searched by :meth:`search_terms`.

        ``vectors`` must come from the index's encoder. Kept in memory only (not saved).
        """
        vectors = as_matrix(vectors, self.dimension)
        if not len(concept_ids) == len(terms) == len(vectors):
            raise ValueError("concept_ids, terms and vectors must have the same length")
        unknown = sorted({c for c in concept_ids if c not in self._concept_row})
        if unknown:
            raise ValueError(f"unknown concept ids: {', '.join(unknown[:5])}")
        self._extra.add(vectors)
        added = pd.DataFrame({"concept_id": list(concept_ids), "term": list(terms)})
        self.terms = pd.concat([self.terms, added], ignore_index=True)
        rows = np.array([self._concept_row[c] for c in concept_ids], dtype=np.int64)
        self.term_concept = np.concatenate([self.term_concept, rows])

    # ------------------------------------------------------------------ lookups
    def concept_row(self, concept_id: str) -> int:
        """Row of ``concept_id`` in :attr:`concepts` (``KeyError`` if absent)."""
        return self._concept_row[concept_id]

    def alt_ids(self, concept_id: str) -> list[str]:
        """Alternative IDs of a concept (empty for an unknown ID)."""
        row = self._concept_row.get(concept_id)
        return [] if row is None else list(self.concepts["alt_ids"].iloc[row])

    def info(self) -> dict[str, Any]:
        """The card plus the folder, for ``termnorm index info``."""
        return {"path": str(self.path) if self.path else None, **self.card}
