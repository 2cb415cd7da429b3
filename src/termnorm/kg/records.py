"""Typed records that every terminology loader yields, and the load report they fill.

A loader turns one source (RRF, OBO, TSV, ...) into three streams of records:
:class:`Concept`, :class:`Term`, :class:`Relation`. Concept IDs are always namespaced,
``NAMESPACE:LOCAL`` (``UMLS:C0027051``, ``HP:0001250``, ``MESH:D003920``, ``OMIM:222100``,
``ICD10CM:I21.9``), so sources combined into one KG never collide by accident, while sources
that share a namespace (MEDIC's and HPO's OMIM diseases) merge on purpose.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Concept:
    """One concept: its ID, display name, semantic types, alternative IDs (xrefs) and the
    vocabulary's own facts as ``(key, value)`` pairs (``attributes``: OMOP's
    ``vocabulary_id``, ``concept_code``, ...)."""

    concept_id: str
    name: str
    semantic_types: tuple[str, ...] = ()
    alt_ids: tuple[str, ...] = ()
    attributes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Term:
    """One surface form of a concept."""

    concept_id: str
    term: str
    lang: str = "en"
    source: str = ""
    is_preferred: bool = False


@dataclass(frozen=True, slots=True)
class Relation:
    """A directed edge ``head --relation--> tail`` between two concept IDs."""

    head: str
    relation: str
    tail: str


@dataclass
class LoadReport:
    """Counts of what a loader read, kept and dropped (with the reason), per record kind.

    Nothing is dropped silently: every ``drop`` names a reason that the CLI prints.
    ``notes`` counts what is worth saying but neither read, kept nor dropped (an entity
    decoded, a concept named by a fallback field). ``info`` holds facts about the source worth
    recording in the KG card (its version, the resolved file paths).
    """

    source: str
    read: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    info: dict[str, str] = field(default_factory=dict)

    def keep(self, *kinds: str, n: int = 1) -> None:
        """Count ``n`` records kept under each of ``kinds`` (``keep("concepts", "chapters")``)."""
        for kind in kinds:
            self.kept[kind] += n

    def drop(self, reason: str, n: int = 1) -> None:
        """Count ``n`` records dropped for ``reason`` (none: the reason is not listed)."""
        if n:
            self.dropped[reason] += n

    def retract(self, kind: str, reason: str) -> None:
        """A record counted kept under ``kind`` is dropped after all, for ``reason``."""
        self.kept[kind] -= 1
        self.dropped[reason] += 1

    def note(self, what: str, n: int = 1) -> None:
        """Count ``n`` of ``what``: neither read, kept nor dropped, but worth saying."""
        self.notes[what] += n

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view (used in the KG card and the CLI summary)."""
        counts = (*COUNTS, "info")
        return {"source": self.source, **{name: dict(getattr(self, name)) for name in counts}}


COUNTS = ("read", "kept", "dropped", "notes")
"""The counters of a :class:`LoadReport`, in the order the CLI lists them."""
