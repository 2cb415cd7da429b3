"""The spaCy face of ``annotate``: a pipeline component named ``termnorm``.

``nlp = spacy.blank("en"); nlp.add_pipe("termnorm", config={"index": "idx/hpo",
"min_score": 0.8})`` needs no import of termnorm: the factory is registered through the
``spacy_factories`` entry point (pyproject), which imports this module. The component is a
thin face over :func:`~termnorm.annotate.detectors.build_annotator` — the same detectors,
normalization, ``min_score`` drop and assertion flags as ``termnorm annotate`` — and writes
what it found onto the ``Doc``:

* ``doc.ents``: one entity per annotation, labelled with its top concept ID (or the
  ``label`` of the config), ``ent.kb_id_`` the concept ID;
* span extensions: ``span._.termnorm_concepts`` the ranked ``[(concept_id, name, score),
  ...]`` (as scispaCy's ``kb_ents``), ``span._.termnorm_negated`` / ``_hypothetical`` /
  ``_historical`` / ``_family`` the ConText flags, ``span._.termnorm_annotation`` the whole
  :class:`~termnorm.annotate.annotation.Annotation` (score, detector, provenance);
* the doc extension ``doc._.termnorm_warning``: why the document's abbreviations could not
  be read (Ab3P crashed on it or did not answer in time: its short forms were not expanded,
  the rest is annotated), ``None`` when they were read or none were looked for.

Its config is generated from :class:`~termnorm.search.spec.PipelineSpec`'s fields and
:class:`~termnorm.annotate.spec.AnnotateSpec`'s (their JSON form, as ``to_dict`` writes
them: ``k``, ``detectors``, ``ner`` the span tagger's folder, ``rules``, ``language`` the
assertion rules' language, ``auto``: detected per document, ``window_chars``,
``max_document_chars``) plus ``label``; an unknown key is refused by spaCy, a bad value by
the spec. The config is the whole state, so ``nlp.to_disk`` / ``spacy.load`` round-trip it.

Offsets: an annotation's code-point offsets become a span through ``doc.char_span(...,
alignment_mode="expand")`` (the tokens that cover it); one that cannot be aligned is logged
and left out, as is one that would overlap an entity already set (spaCy forbids
overlapping entities; the annotator's merged spans never overlap, the guard is for the
expansion to whole tokens and for entities an earlier component set, which are kept).
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.annotate.spec import AnnotateSpec
from termnorm.errors import ArtifactMismatchError, MissingExtraError
from termnorm.search.spec import PipelineSpec

try:
    from spacy.language import Language
    from spacy.tokens import Doc, Span
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise MissingExtraError("spacy", "spacy") from exc

if TYPE_CHECKING:
    from termnorm.annotate.annotation import Annotation
    from termnorm.annotate.pipeline import Annotator

__all__ = [
    "DEFAULT_CONFIG",
    "DOC_EXTENSIONS",
    "EXTENSIONS",
    "FACTORY",
    "TermnormComponent",
    "check_index",
    "make_component",
]

logger = logging.getLogger(__name__)

FACTORY = "termnorm"
"""The component's name in spaCy (``nlp.add_pipe("termnorm")``)."""

FLAGS = ("negated", "hypothetical", "historical", "family")
EXTENSIONS = ("termnorm_concepts", "termnorm_annotation", *(f"termnorm_{f}" for f in FLAGS))
"""The ``Span`` extensions the component sets (``span._.NAME``)."""
DOC_EXTENSIONS = ("termnorm_warning",)
"""The ``Doc`` extensions the component sets (``doc._.NAME``)."""

_OWN = {k: v for k, v in AnnotateSpec().to_dict().items() if k not in ("search", "detectors")}
_OWN |= {"detectors": [], "label": None}  # no detectors: the tagger with ner, else the dictionary
DEFAULT_CONFIG: dict[str, Any] = {**PipelineSpec().to_dict(), **_OWN}
"""The config a bare ``add_pipe("termnorm")`` gets: every pipeline and annotate spec
field's default (JSON form) and ``label`` (``None``: the top concept ID)."""


def check_index(index: Path | None) -> None:
    """Refuse a config ``index`` that is no index folder, when the component is added
    (``add_pipe``, ``spacy.load``) rather than deep inside the first document:
    :class:`ArtifactMismatchError` naming the path and what to do. Reads no more than
    whether the folder has an index card (the index itself loads on the first document)."""
    from termnorm.index.term_index import CARD_NAME

    if index is None or (Path(index) / CARD_NAME).is_file():
        return
    what = "does not exist" if not Path(index).exists() else f"has no {CARD_NAME}"
    raise ArtifactMismatchError(
        f"the termnorm component's index {index} {what}: build it first (termnorm index build "
        f"--kg KG --out {index}), or leave 'index' out of the config for the default index"
    )


class TermnormComponent:
    """Annotates a ``Doc`` with the concepts of ``spec`` (module doc); builds nothing until
    the first document (the index, its encoder and the dictionary load then, once), but an
    ``index`` that is no index folder is refused at once (:func:`check_index`)."""

    def __init__(self, name: str, spec: AnnotateSpec, label: str | None = None) -> None:
        from termnorm.annotate.detectors import build_annotator

        check_index(spec.search.index)
        _register_extensions()
        self.name = name
        self.label = label
        self.annotator: Annotator = build_annotator(spec)

    def __call__(self, doc: Doc) -> Doc:
        """``doc`` with its entities, their extensions and its warning set (module doc)."""
        found = self.annotator.annotate_document(doc.text)
        spans = [
            span
            for annotation in found.annotations
            if (span := self._span(doc, annotation)) is not None
        ]
        doc.ents = _without_overlaps([*doc.ents, *spans])
        doc._.termnorm_warning = found.warning
        return doc

    def _span(self, doc: Doc, annotation: Annotation) -> Span | None:
        """The span of ``annotation`` widened to whole tokens, with its extensions; ``None``
        (logged) when no token covers it."""
        span = doc.char_span(
            annotation.start,
            annotation.end,
            label=self.label or annotation.concept_id,
            kb_id=annotation.concept_id,
            alignment_mode="expand",
        )
        if span is None:
            logger.warning(
                "annotation %r [%d:%d] (%s) left out: no token of the doc covers it",
                annotation.text,
                annotation.start,
                annotation.end,
                annotation.concept_id,
            )
            return None
        span._.termnorm_concepts = list(annotation.candidates)
        span._.termnorm_annotation = annotation
        for flag in FLAGS:
            span._.set(f"termnorm_{flag}", getattr(annotation, flag))
        return span


def _without_overlaps(spans: list[Span]) -> list[Span]:
    """``spans`` sorted by start, each one that overlaps a span before it IN THE LIST left
    out and logged (spaCy refuses overlapping entities): the doc's entities, listed first,
    win over the component's."""
    taken: set[int] = set()
    kept: list[Span] = []
    for span in spans:
        tokens = set(range(span.start, span.end))
        if tokens & taken:
            logger.warning(
                "entity %r [%d:%d] (%s) left out: it overlaps another entity",
                span.text,
                span.start_char,
                span.end_char,
                span.label_,
            )
            continue
        taken |= tokens
        kept.append(span)
    return sorted(kept, key=lambda s: s.start)


def _register_extensions() -> None:
    """Register :data:`EXTENSIONS` on ``Span`` and :data:`DOC_EXTENSIONS` on ``Doc`` (each
    once, default ``None``)."""
    for owner, names in ((Span, EXTENSIONS), (Doc, DOC_EXTENSIONS)):
        for name in names:
            if not owner.has_extension(name):
                owner.set_extension(name, default=None)


def make_component(nlp: Language, name: str, **config: Any) -> TermnormComponent:
    """spaCy's factory of the ``termnorm`` component: ``config`` holds the pipeline and
    annotate specs' fields (their JSON form) and ``label`` (:data:`DEFAULT_CONFIG`); a bad
    value is the spec's ``ValueError`` naming its option (an unknown detector's lists the
    known ones)."""
    label = config.pop("label")
    own = {name: config.pop(name) for name in _OWN if name in config}
    where = "the termnorm component's config"
    spec = AnnotateSpec.from_dict({**own, "search": config}, where)
    return TermnormComponent(name, spec, label=label)


def _factory_signature() -> inspect.Signature:
    """``make_component``'s signature as spaCy reads it: one keyword per config key (spaCy
    validates a config against it, so an unknown key is refused by name)."""
    fixed = list(inspect.signature(make_component).parameters.values())[:2]
    names = [f.name for f in dataclasses.fields(PipelineSpec)] + list(_OWN)
    return inspect.Signature(
        [
            *fixed,
            *(
                inspect.Parameter(
                    name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=DEFAULT_CONFIG[name],
                    annotation=Any,
                )
                for name in names
            ),
        ]
    )


make_component.__signature__ = _factory_signature()  # type: ignore[attr-defined]
make_component.__annotations__ = {"nlp": Language, "name": str, "return": TermnormComponent} | {
    name: Any for name in DEFAULT_CONFIG
}
Language.factory(FACTORY, default_config=DEFAULT_CONFIG, func=make_component)
