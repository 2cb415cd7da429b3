"""Request and response bodies of the JSON API, declared once: FastAPI validates with them
and writes the OpenAPI page from them.

Errors use one shape everywhere, FastAPI's own: ``{"detail": [{"loc": [...], "msg": "...",
"type": "..."}]}``, where ``loc`` names the field (``["body", "texts", 3]``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

__all__ = [
    "CandidateOut",
    "ConceptOut",
    "ErrorItem",
    "ErrorOut",
    "HealthOut",
    "NormalizeIn",
    "NormalizeOut",
    "ReadyOut",
    "RelationOut",
    "SynonymPair",
    "SynonymsIn",
    "SynonymsOut",
    "TermOut",
    "TextResult",
    "error_body",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NormalizeIn(_Strict):
    """Texts to normalize and how."""

    texts: list[StrictStr] = Field(
        min_length=1, description="The texts (1 to the server's max batch)."
    )
    k: int = Field(5, ge=1, description="Concepts per text (at most the server's max k).")
    min_score: float | None = Field(
        None, ge=-1.0, le=1.0, description="Drop candidates scoring below it (cosine)."
    )
    namespaces: list[StrictStr] | None = Field(
        None, description='Keep only concepts in these namespaces (e.g. ["HP"]).'
    )
    semantic_types: list[StrictStr] | None = Field(
        None, description="Keep only concepts of these semantic types."
    )
    strategy: StrictStr | None = Field(
        None,
        description='Search strategy: "o-t", "o-c", "d-t", "od-t", ... or a sieve "d-t+od-t" '
        "(D targets need domain synonyms). Default (null): the service's, as the CLI's: "
        '"d-t+od-t" once it has domain synonyms, else "o-t" (see /v1/ready).',
    )
    multi: StrictBool = Field(
        False,
        description="Several codes per text (concept_ids) with the predicted implication "
        "number; needs a service started with --ranker and an implication head.",
    )


class CandidateOut(BaseModel):
    """One ranked concept with its provenance (``Candidate.to_dict()``)."""

    concept_id: str
    name: str
    score: float
    matched_term: str
    rank: int
    source: str = Field(description='"ontology" or "domain" (a synonym added to the space).')
    term_source: str = Field(description="The KG source of the matched term, or the synonym file.")
    is_preferred: bool
    semantic_types: list[str]
    recall_score: float | None = Field(
        None, description="The recall cosine, when a ranker reordered the candidates."
    )
    ranker_score: float | None = Field(None, description="The ranker's probability.")


class TextResult(BaseModel):
    """The candidates of one text, best first; ``abstained`` says why there are none."""

    text: str
    candidates: list[CandidateOut]
    abstained: str | None = None
    concept_ids: list[str] | None = Field(
        None, description='The codes of a "multi" request (one or several).'
    )
    implication: int | None = Field(
        None, description="The predicted number of codes (3: three or more)."
    )


class NormalizeOut(BaseModel):
    """One result per input text, in order."""

    strategy: str
    k: int
    results: list[TextResult]


class TermOut(BaseModel):
    """A term of a concept with its KG source."""

    term: str
    source: str
    is_preferred: bool


class RelationOut(BaseModel):
    """A KG edge of the concept: ``out`` is concept -relation-> neighbour, ``in`` is
    neighbour -relation-> concept."""

    relation: str
    direction: Literal["out", "in"]
    concept_id: str = Field(description="The neighbour's ID (look it up the same way).")
    name: str = Field(description="The neighbour's name.")


class ConceptOut(BaseModel):
    """A concept of the index, with the domain synonyms added to the running service and
    its KG neighbours."""

    concept_id: str
    name: str
    semantic_types: list[str]
    alt_ids: list[str]
    synonyms: list[TermOut]
    domain_synonyms: list[str]
    relations: list[RelationOut] | None = Field(
        description="KG edges, outgoing first, at most the request's relations_limit; null "
        "when the index predates stored relations (index format 2): rebuild it with "
        "'termnorm index build' to have them."
    )
    relations_total: int | None = Field(
        description="How many KG edges the concept has (null with relations)."
    )


class SynonymPair(_Strict):
    """A domain synonym: a text for a concept (its ID, a bare ID or an alternative ID)."""

    concept_id: StrictStr = Field(min_length=1)
    text: StrictStr = Field(min_length=1)


class SynonymsIn(_Strict):
    """Synonyms to add to the running search space."""

    pairs: list[SynonymPair] = Field(min_length=1)


class SynonymsOut(BaseModel):
    """What was added: ``kept`` new pairs, ``encoded_texts`` distinct new texts encoded,
    ``dropped`` by reason (duplicates), and how many domain synonyms the space now has."""

    read: int
    kept: int
    encoded_texts: int
    dropped: dict[str, int]
    total: int


class HealthOut(BaseModel):
    """The process is alive."""

    status: str = "alive"


class ReadyOut(BaseModel):
    """``loading``, ``ready`` (with what is served) or ``failed`` (with why)."""

    status: str
    index: str | None = None
    concepts: int | None = None
    terms: int | None = None
    model: str | None = None
    domain_synonyms: int | None = None
    strategy: str | None = Field(
        default=None, description="The strategy of a request that names none."
    )
    synonyms_skipped: int | None = Field(
        default=None,
        description="Lines of the synonyms store skipped at start: a torn last line, left by "
        "a crash in the middle of a write (the log names it; every whole line is loaded).",
    )
    error: str | None = None


class ErrorItem(BaseModel):
    """One problem: where (``loc``), what (``msg``) and its kind (``type``)."""

    loc: list[str | int]
    msg: str
    type: str


class ErrorOut(BaseModel):
    """Every error response."""

    detail: list[ErrorItem]


def error_body(loc: list[str | int], msg: str, kind: str) -> dict[str, Any]:
    """The JSON of an error response with one item."""
    return {"detail": [{"loc": loc, "msg": msg, "type": kind}]}
