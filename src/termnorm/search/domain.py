"""The search space: an ontology index plus, optionally, domain synonyms in their own backend.

A :class:`SearchSpace` holds a :class:`~termnorm.index.TermIndex` (target O: searched through
its own backends, never re-encoded or modified), the query encoder and optional domain
synonyms (target D: annotated mentions or a ``concept_id<TAB>text`` file) added by
:meth:`SearchSpace.with_synonyms`, which encodes each distinct new text once into their own
backend (exact by default). Each module is made of parts (:mod:`termnorm.search.parts`):

=====  =============================================================================
O-T    the index's term rows
O-C    the index's stored concept vectors
D-T    the domain synonyms' rows
D-C    per concept with domain synonyms, the L2-normalised mean of its synonyms' vectors
OD-T   O-T's rows and D-T's rows
OD-C   O-C's vectors, except for concepts with domain synonyms: the mean over their
       ontology terms *and* domain synonyms
=====  =============================================================================

Means are computed once per space (:func:`termnorm.index.tables.concept_means`). Synonym IDs
are resolved by :meth:`TermIndex.resolve_id <termnorm.index.TermIndex.resolve_id>`
(``D005955`` finds ``MESH:D005955``, alt IDs count); unknown, unlinkable (``-1``) or
composite IDs, empty texts and duplicate pairs are dropped and counted in
:attr:`SynonymReport.dropped`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from termnorm.errors import EmptyResultError
from termnorm.index.base import Backend, VectorIndex
from termnorm.index.factory import build_vector_index, resolve_backend
from termnorm.index.tables import concept_means
from termnorm.index.term_index import TermIndex
from termnorm.index.vectors import storage_rounded
from termnorm.kg.ids import id_key
from termnorm.mentions.synonyms import SynonymSources, as_sources, load_synonyms
from termnorm.search.candidate import Source
from termnorm.search.filters import ConceptFilter
from termnorm.search.parts import ConceptColumns, ConceptRows, IndexTerms, MeanRows, Part, TextRows
from termnorm.search.strategies import ModuleSpec, Representation, Target

__all__ = [
    "DomainSynonyms",
    "QueryEncoder",
    "SearchSpace",
    "SynonymReport",
    "add_synonym_sources",
    "resolve_synonyms",
]

logger = logging.getLogger(__name__)

_UNLINKABLE = frozenset({"-1", "CUI-LESS", "CUI_LESS", "CUILESS", "NIL"})


class QueryEncoder(Protocol):
    """What encodes queries and synonyms: :class:`~termnorm.encoders.TermEncoder` fits."""

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """L2-normalised float32 vectors ``[len(texts), d]`` in input order."""
        ...


@dataclass(frozen=True)
class DomainSynonyms:
    """Domain synonyms: texts, their concepts, where each came from, and vectors ``[n, d]``."""

    texts: tuple[str, ...]
    concept_ids: tuple[str, ...]
    sources: tuple[str, ...]
    vectors: np.ndarray

    def __post_init__(self) -> None:
        sizes = {len(self.texts), len(self.concept_ids), len(self.sources), len(self.vectors)}
        if len(sizes) != 1:
            raise ValueError(
                f"{len(self.texts)} texts, {len(self.concept_ids)} concept IDs, "
                f"{len(self.sources)} sources and {len(self.vectors)} vectors: they must match"
            )

    def __len__(self) -> int:
        return len(self.texts)

    def __add__(self, other: DomainSynonyms) -> DomainSynonyms:
        return DomainSynonyms(
            self.texts + other.texts,
            self.concept_ids + other.concept_ids,
            self.sources + other.sources,
            np.concatenate([self.vectors, other.vectors]),
        )


@dataclass
class SynonymReport:
    """What :meth:`SearchSpace.with_synonyms` kept, encoded and dropped (by reason)."""

    read: int = 0
    kept: int = 0
    encoded_texts: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready view."""
        return {**asdict(self), "dropped": dict(self.dropped)}


def resolve_synonyms(
    pairs: Iterable[tuple[str, Sequence[str]]],
    resolve: Callable[[str], str | None],
) -> tuple[list[tuple[str, str]], SynonymReport]:
    """``(text, gold_ids)`` pairs → unique ``(concept_id, text)`` pairs of known concepts;
    ``resolve`` maps an ID to its concept's ID, or ``None`` when unknown."""
    report = SynonymReport()
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    for text, gold in pairs:
        report.read += 1
        text = text.strip()
        ids = [g.strip() for g in gold if g.strip()]
        if not text:
            report.dropped["empty text"] += 1
        elif not ids or any(g.upper() in _UNLINKABLE for g in ids):
            report.dropped["unlinkable"] += 1
        elif len({id_key(g) for g in ids}) > 1:
            report.dropped["composite (several IDs)"] += 1
        elif (concept := resolve(ids[0])) is None:
            report.dropped["concept not in the index"] += 1
        elif (concept, text) in seen:
            report.dropped["duplicate"] += 1
        else:
            seen.add((concept, text))
            out.append((concept, text))
    report.kept = len(out)
    return out, report


class SearchSpace:
    """The index (target O), optional domain synonyms (target D) and the query encoder.

    Args:
        index: the ontology index, used as it is.
        encoder: encodes queries and new synonyms; when it has a ``fingerprint`` it must be
            the index's (:meth:`TermIndex.check_encoder`).
        domain: domain synonyms with their vectors, if any.
        domain_backend: the backend domain synonyms and search-time means are held in.
    """

    def __init__(
        self,
        index: TermIndex,
        encoder: QueryEncoder,
        domain: DomainSynonyms | None = None,
        domain_backend: Backend | str = Backend.EXACT,
    ) -> None:
        if hasattr(encoder, "fingerprint"):
            index.check_encoder(encoder)  # type: ignore[arg-type]
        self.index = index
        self.encoder = encoder
        self.domain = domain
        self.domain_backend = Backend(domain_backend)
        self.synonym_report: SynonymReport | None = None  # of the with_synonyms() that made it
        self.columns = ConceptColumns.of(index)
        self._index_terms: IndexTerms | None = None  # shared with the spaces made from it
        self._parts: dict[ModuleSpec, list[Part]] = {}
        self._masks: dict[ConceptFilter, np.ndarray | None] = {}

    # ------------------------------------------------------------------ concepts
    def alt_ids(self, concept_id: str) -> tuple[str, ...]:
        """Other IDs of a concept (empty for an unknown one)."""
        return tuple(self.index.alt_ids(concept_id))

    def allowed(self, concept_filter: ConceptFilter) -> np.ndarray | None:
        """Which concept rows pass ``concept_filter`` (``None``: all), computed once per
        filter (:meth:`ConceptFilter.mask <termnorm.search.filters.ConceptFilter.mask>`)."""
        if concept_filter not in self._masks:
            self._masks[concept_filter] = concept_filter.mask(self.columns)
        return self._masks[concept_filter]

    def encode_queries(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Query vectors ``[q, d]`` (float32, as the encoder returns them)."""
        return np.asarray(self.encoder.encode(list(texts), batch_size=batch_size), np.float32)

    # ------------------------------------------------------------------ synonyms
    def with_synonyms(
        self,
        pairs: Iterable[tuple[str, Sequence[str]]],
        batch_size: int = 256,
        source: str = Source.DOMAIN.value,
    ) -> tuple[SearchSpace, SynonymReport]:
        """A new space whose domain target adds ``pairs`` (``(text, gold_ids)``), each
        reported with ``term_source=source`` (e.g. the synonym file's name).

        Only the distinct new texts are encoded; the index is shared, untouched. Synonyms
        already in the domain target are kept once.
        """
        ids = self.columns.ids

        def resolve(concept_id: str) -> str | None:
            row = self.index.resolve_id(concept_id)
            return None if row is None else str(ids[row])

        resolved, report = resolve_synonyms(pairs, resolve)
        known = set()
        if self.domain is not None:
            known = set(zip(self.domain.concept_ids, self.domain.texts, strict=True))
        fresh = [(cid, text) for cid, text in resolved if (cid, text) not in known]
        if len(resolved) > len(fresh):
            report.dropped["duplicate"] += len(resolved) - len(fresh)
        report.kept = len(fresh)
        for reason, n in sorted(report.dropped.items()):
            logger.info("domain synonyms: %d dropped (%s)", n, reason)
        if not fresh and self.domain is None:
            raise EmptyResultError(
                f"no usable domain synonym among {report.read} read "
                f"(dropped: {dict(report.dropped)}); check the concept IDs against the index"
            )
        distinct = list(dict.fromkeys(text for _cid, text in fresh))
        report.encoded_texts = len(distinct)
        vecs = (
            # rounded as the index stores its vectors: equal texts score equally in O and D
            storage_rounded(self.encoder.encode(distinct, batch_size=batch_size))
            if distinct
            else np.empty((0, self.index.dimension), dtype=np.float32)
        )
        row = {text: i for i, text in enumerate(distinct)}
        new = DomainSynonyms(
            tuple(t for _c, t in fresh),
            tuple(c for c, _t in fresh),
            (source,) * len(fresh),
            vecs[[row[t] for _c, t in fresh]] if fresh else vecs,
        )
        domain = new if self.domain is None else self.domain + new
        space = SearchSpace(self.index, self.encoder, domain, self.domain_backend)
        space.synonym_report = report
        space._index_terms = self._index_terms  # the same index rows: no second pre-scan
        return space, report

    # ------------------------------------------------------------------ search targets
    def require(self, target: Target) -> None:
        """Raise when ``target`` needs domain synonyms and there are none."""
        if target is not Target.O and (self.domain is None or len(self.domain) == 0):
            raise EmptyResultError(
                f"search target {target.value.upper()} needs domain synonyms: add them first "
                "(--synonyms FILE, or termnorm.api.add_synonyms)"
            )

    def index_terms(self) -> IndexTerms:
        """The index's term rows as a part, one per index across this space and the spaces
        :meth:`with_synonyms` makes from it (they share its lazily built structures)."""
        if self._index_terms is None:
            self._index_terms = IndexTerms(self.index, self.columns)
        return self._index_terms

    def prepare(self) -> None:
        """Build now what the first searches would otherwise build (the index rows'
        pre-scan and lookup tables): a service calls it before it says ready."""
        self.index_terms().prepare()

    def parts(self, module: ModuleSpec) -> list[Part]:
        """The parts ``module`` searches (see the module docstring), built once per space."""
        self.require(module.target)
        if module not in self._parts:
            self._parts[module] = self._build_parts(module)
        return self._parts[module]

    def _build_parts(self, module: ModuleSpec) -> list[Part]:
        target, rep = module.target, module.representation
        if rep is Representation.T:
            parts: list[Part] = []
            if target is not Target.D:
                parts.append(self.index_terms())
            if target is not Target.O:
                parts.append(self._domain_texts())
            return parts
        if target is Target.O:
            return [ConceptRows(self.index, self.columns)]
        concepts, means = self._domain_means(with_ontology=target is Target.OD)
        mean_part = MeanRows(concepts, self.columns.names, means, self._backend(means))
        if target is Target.D:
            return [mean_part]
        moved = np.zeros(len(self.columns.ids), dtype=bool)
        moved[concepts] = True
        return [ConceptRows(self.index, self.columns, excluded=moved), mean_part]

    def _backend(self, vectors: np.ndarray) -> VectorIndex:
        spec = resolve_backend(self.domain_backend, len(vectors), int(vectors.shape[1]))
        return build_vector_index(spec, vectors)

    def _domain_rows(self) -> np.ndarray:
        """Concept row of each domain synonym."""
        assert self.domain is not None
        return np.fromiter(
            (self.index.concept_row(c) for c in self.domain.concept_ids),
            dtype=np.int64,
            count=len(self.domain),
        )

    def _domain_texts(self) -> TextRows:
        assert self.domain is not None
        vectors = self.domain.vectors
        return TextRows(
            self.domain.texts,
            self.domain.sources,
            self._domain_rows(),
            self.columns.names,
            vectors,
            self._backend(vectors),
        )

    def _domain_means(self, with_ontology: bool) -> tuple[np.ndarray, np.ndarray]:
        """Concept rows with domain synonyms (ascending) and their mean vectors: over the
        synonyms, or over the concept's ontology terms and its synonyms."""
        assert self.domain is not None
        owners = self._domain_rows()
        vectors = self.domain.vectors
        concepts = np.unique(owners)
        if with_ontology:
            terms = np.flatnonzero(np.isin(self.index.term_concept, concepts))
            owners = np.concatenate([self.index.term_concept[terms], owners])
            vectors = np.concatenate(
                [np.asarray(self.index.term_vectors[terms], dtype=np.float32), vectors]
            )
        means = concept_means(vectors, np.searchsorted(concepts, owners), len(concepts))
        return concepts, means


def add_synonym_sources(
    space: SearchSpace, sources: SynonymSources, format: str | None = None
) -> tuple[SearchSpace, list[tuple[str, SynonymReport]]]:
    """``space`` plus the domain synonyms of every source in ``sources`` (one synonym file,
    several, or ``(concept_id, text)`` pairs; :func:`~termnorm.mentions.synonyms.as_sources`),
    in order, each reported as ``term_source`` by its file name (``"domain"`` for pairs).
    Returns the new space and ``(source name, report)`` per source."""
    reports = []
    for source in as_sources(sources):
        name = Path(source).name if isinstance(source, str | Path) else Source.DOMAIN.value
        space, report = space.with_synonyms(load_synonyms(source, format), source=name)
        reports.append((str(source) if isinstance(source, str | Path) else name, report))
    return space, reports
