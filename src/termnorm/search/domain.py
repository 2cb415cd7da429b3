"""Search targets O (ontology), D (domain synonyms) and OD (both), as vectors ready to search.

A :class:`SearchSpace` holds the ontology's term vectors (taken as they are from an index:
never re-encoded, never modified), optional domain synonyms with their vectors, the concept
names and alternative IDs, and the encoder used for queries. Domain synonyms — annotated
training mentions or a user's ``concept_id<TAB>text`` file — are added at search time with
:meth:`SearchSpace.with_synonyms`: only the new texts go through the encoder (each distinct
string once), so no retraining and no re-encoding of the ontology.

For each target the space gives two representations (Xu & Bethard 2021, section 3.2):

T  every text is a row (:meth:`SearchSpace.text_rows`).
C  one row per concept, the L2-normalised mean of the concept's text vectors
   (:meth:`SearchSpace.concept_rows`); for OD the mean runs over the concept's ontology
   synonyms *and* its domain synonyms, so a concept without domain synonyms keeps its O-C
   vector.

Domain synonym IDs are matched to the ontology's concepts through
:func:`termnorm.kg.ids.id_key` (``D005955`` finds ``MESH:D005955``, alt IDs count too).
Pairs whose ID is unknown, unlinkable (``-1``) or composite (several IDs), and empty texts,
are dropped and counted in :attr:`SynonymReport.dropped` (nothing is dropped silently).
Exact duplicate (concept, text) pairs are kept once.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Protocol

import numpy as np

from termnorm.errors import EmptyResultError
from termnorm.kg.ids import id_key

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.index.term_index import TermIndex

__all__ = [
    "SearchSpace",
    "SynonymReport",
    "Target",
    "TextVectors",
    "concept_means",
    "resolve_synonyms",
]

logger = logging.getLogger(__name__)

_UNLINKABLE = frozenset({"-1", "CUI-LESS", "CUI_LESS", "CUILESS", "NIL"})


class Target(str, Enum):
    """What a search module searches over."""

    O = "o"  # noqa: E741 - the paper's name: ontology synonyms
    D = "d"  # domain synonyms (training mentions, a user's file)
    OD = "od"  # both


class Encoder(Protocol):
    """What encodes texts: :class:`~termnorm.encoders.TermEncoder` and test doubles."""

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """L2-normalised float32 vectors ``[len(texts), d]`` in input order."""
        ...


@dataclass(frozen=True)
class TextVectors:
    """Texts, the concept each one names, and their L2-normalised vectors ``[n, d]``."""

    texts: tuple[str, ...]
    concept_ids: tuple[str, ...]
    vectors: np.ndarray

    def __post_init__(self) -> None:
        if not len(self.texts) == len(self.concept_ids) == len(self.vectors):
            raise ValueError(
                f"{len(self.texts)} texts, {len(self.concept_ids)} concept IDs and "
                f"{len(self.vectors)} vectors: they must match"
            )

    def __len__(self) -> int:
        return len(self.texts)


@dataclass
class SynonymReport:
    """What :meth:`SearchSpace.with_synonyms` kept, encoded and dropped (by reason)."""

    read: int = 0
    kept: int = 0
    encoded_texts: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready view."""
        return {
            "read": self.read,
            "kept": self.kept,
            "encoded_texts": self.encoded_texts,
            "dropped": dict(self.dropped),
        }


def concept_means(parts: Sequence[TextVectors]) -> tuple[tuple[str, ...], np.ndarray]:
    """Concept IDs (sorted) and the L2-normalised mean of each concept's vectors ``[c, d]``
    over all ``parts`` (a concept's rows may come from several parts)."""
    dim = int(parts[0].vectors.shape[1])
    ids = sorted({cid for part in parts for cid in part.concept_ids})
    pos = {cid: i for i, cid in enumerate(ids)}
    sums = np.zeros((len(ids), dim), dtype=np.float64)
    for part in parts:
        which = np.fromiter((pos[c] for c in part.concept_ids), np.int64, count=len(part))
        np.add.at(sums, which, np.asarray(part.vectors, dtype=np.float64))
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    means = (sums / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return tuple(ids), means


def resolve_synonyms(
    pairs: Iterable[tuple[str, Sequence[str]]],
    key_to_concept: Mapping[str, str],
) -> tuple[list[tuple[str, str]], SynonymReport]:
    """``(text, gold_ids)`` pairs → unique ``(concept_id, text)`` pairs of known concepts."""
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
        elif id_key(ids[0]) not in key_to_concept:
            report.dropped["concept not in the index"] += 1
        else:
            pair = (key_to_concept[id_key(ids[0])], text)
            if pair in seen:
                report.dropped["duplicate"] += 1
            else:
                seen.add(pair)
                out.append(pair)
    report.kept = len(out)
    return out, report


class SearchSpace:
    """Ontology vectors (+ optional domain synonyms), names, alt IDs and the query encoder.

    Args:
        ontology: the index's term texts, concepts and vectors (used as they are).
        names: ``concept_id -> display name``.
        alt_ids: ``concept_id -> other IDs`` (for gold matching and synonym resolution).
        encoder: encodes queries and new synonyms (``encode(texts) -> [n, d]``, normalised).
        domain: domain synonyms with their vectors, if any.
    """

    def __init__(
        self,
        ontology: TextVectors,
        names: Mapping[str, str],
        alt_ids: Mapping[str, Sequence[str]],
        encoder: Encoder,
        domain: TextVectors | None = None,
    ) -> None:
        self.ontology = ontology
        self.names = names
        self.alt_ids = alt_ids
        self.encoder = encoder
        self.domain = domain
        self._concept_rows: dict[Target, tuple[tuple[str, ...], np.ndarray]] = {}
        self._keys: dict[str, str] | None = None
        self.synonym_report: SynonymReport | None = None  # of the with_synonyms() that made it

    @classmethod
    def from_index(cls, index: TermIndex, encoder: Encoder) -> SearchSpace:
        """The space of a :class:`~termnorm.index.TermIndex`: its ontology term vectors as
        they are (memory-mapped ones stay so), names and alt IDs; ``encoder`` must be the
        index's (checked when it has a fingerprint)."""
        if hasattr(encoder, "fingerprint"):
            index.check_encoder(encoder)  # type: ignore[arg-type]
        n = len(index.term_vectors)  # terms attached with add_terms() are not ontology terms
        terms = index.terms.iloc[:n]
        ontology = TextVectors(
            tuple(terms["term"].astype(str)),
            tuple(terms["concept_id"].astype(str)),
            index.term_vectors,
        )
        ids = index.concepts["concept_id"].astype(str).tolist()
        names = dict(zip(ids, index.concepts["name"].astype(str), strict=True))
        alt_ids = {
            cid: tuple(alts)
            for cid, alts in zip(ids, index.concepts["alt_ids"], strict=True)
            if len(alts)
        }
        return cls(ontology, names, alt_ids, encoder)

    # ------------------------------------------------------------------ synonyms
    def key_to_concept(self) -> dict[str, str]:
        """``id_key(ID) -> concept_id`` over concept IDs and alt IDs (own IDs win, then the
        smaller concept ID)."""
        if self._keys is None:
            own: dict[str, str] = {}
            alt: dict[str, str] = {}
            for cid in sorted(self.names):
                own.setdefault(id_key(cid), cid)
                for a in self.alt_ids.get(cid, ()):
                    alt.setdefault(id_key(a), cid)
            self._keys = {**alt, **own}
        return self._keys

    def with_synonyms(
        self, pairs: Iterable[tuple[str, Sequence[str]]], batch_size: int = 256
    ) -> tuple[SearchSpace, SynonymReport]:
        """A new space whose domain target adds ``pairs`` (``(text, gold_ids)``).

        Only the distinct new texts are encoded; the ontology vectors are shared, untouched.
        Synonyms already in the domain target are kept once.
        """
        resolved, report = resolve_synonyms(pairs, self.key_to_concept())
        known = (
            set(zip(self.domain.concept_ids, self.domain.texts, strict=True))
            if (self.domain is not None)
            else set()
        )
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
            np.asarray(self.encoder.encode(distinct, batch_size=batch_size), dtype=np.float32)
            if distinct
            else np.empty((0, self.ontology.vectors.shape[1]), dtype=np.float32)
        )
        row = {text: i for i, text in enumerate(distinct)}
        new = TextVectors(
            tuple(t for _c, t in fresh),
            tuple(c for c, _t in fresh),
            vecs[[row[t] for _c, t in fresh]] if fresh else vecs,
        )
        if self.domain is not None:
            new = TextVectors(
                self.domain.texts + new.texts,
                self.domain.concept_ids + new.concept_ids,
                np.concatenate([self.domain.vectors, new.vectors]),
            )
        space = SearchSpace(self.ontology, self.names, self.alt_ids, self.encoder, new)
        space.synonym_report = report
        return space, report

    # ------------------------------------------------------------------ search targets
    def require(self, target: Target) -> None:
        """Raise when ``target`` needs domain synonyms and there are none."""
        if target is not Target.O and (self.domain is None or len(self.domain) == 0):
            raise EmptyResultError(
                f"search target {target.value.upper()} needs domain synonyms: add them first "
                "(--synonyms FILE, or termnorm.api.add_synonyms)"
            )

    def text_rows(self, target: Target) -> list[TextVectors]:
        """Representation T of ``target``: its parts, one row per text (OD: [O, D]; the
        parts are searched one by one and merged, so nothing is copied)."""
        target = Target(target)
        self.require(target)
        if target is Target.O:
            return [self.ontology]
        assert self.domain is not None
        return [self.domain] if target is Target.D else [self.ontology, self.domain]

    def concept_rows(self, target: Target) -> tuple[tuple[str, ...], np.ndarray]:
        """Representation C of ``target``: concept IDs (sorted) and their mean vectors
        (computed once per space, from the stored vectors: nothing is re-encoded)."""
        target = Target(target)
        if target not in self._concept_rows:
            self._concept_rows[target] = concept_means(self.text_rows(target))
        return self._concept_rows[target]

    def encode_queries(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Query vectors ``[q, d]`` (float32, as the encoder returns them)."""
        return np.asarray(self.encoder.encode(list(texts), batch_size=batch_size), np.float32)
