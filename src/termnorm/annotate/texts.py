"""``termnorm.annotate(text_or_texts, index=..., **spec fields)``: the Python face of the
annotation pipeline (what :func:`termnorm.api.annotate` and a call of the
``termnorm.annotate`` package itself run).

The keywords are those of :func:`termnorm.normalize`: ``index`` (a loaded
:class:`~termnorm.index.TermIndex`, an index folder, or ``None`` for the default index),
``synonyms`` (a synonym file, a list of files, or ``(concept_id, text)`` pairs: added to the
search AND to the dictionary detector) and the :class:`~termnorm.search.spec.PipelineSpec`
fields (``min_score``, ``strategy``, ``ranker`` as a folder, ...), plus the
:class:`~termnorm.annotate.spec.AnnotateSpec` fields: ``ner`` (a span tagger folder,
``termnorm ner train``), ``detectors`` (registered names: ``"dictionary"``, ``"tagger"``,
``"both"``, a list; default: the tagger with ``ner``, the dictionary without; or the detector
objects themselves), ``rules`` (a rules TSV added to the shipped ones, or
:class:`~termnorm.annotate.assertion_rules.AssertionRules` used instead of them),
``language``, ``max_chars`` (the window size), ``max_document_chars``. The built search, the
compiled dictionary and the loaded tagger are cached (by ``build`` and by the dictionary
cache), so repeated calls cost only the detection and the span searches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from termnorm.annotate.annotation import Annotation
from termnorm.annotate.spans import Detector

if TYPE_CHECKING:
    from termnorm.annotate.assertion_rules import AssertionRules
    from termnorm.index import TermIndex
    from termnorm.mentions.synonyms import SynonymSources

__all__ = ["annotate_texts"]


@overload
def annotate_texts(
    texts: str,
    index: TermIndex | str | Path | None = None,
    k: int = 5,
    **options: Any,
) -> list[Annotation]: ...
@overload
def annotate_texts(
    texts: Sequence[str],
    index: TermIndex | str | Path | None = None,
    k: int = 5,
    **options: Any,
) -> list[list[Annotation]]: ...
def annotate_texts(
    texts: str | Sequence[str],
    index: TermIndex | str | Path | None = None,
    k: int = 5,
    *,
    synonyms: SynonymSources | None = None,
    detectors: Sequence[Detector] | Sequence[str] | str | None = None,
    rules: AssertionRules | str | Path | None = None,
    max_chars: int | None = None,
    **spec: Any,
) -> list[Annotation] | list[list[Annotation]]:
    """The annotations of one text (a list), or of each of several texts (a list of lists;
    doc ids are the positions, ``"0"``, ``"1"``, ...).

    ``spec``: :class:`~termnorm.search.spec.PipelineSpec` and
    :class:`~termnorm.annotate.spec.AnnotateSpec` fields (an unknown one is a ``TypeError``;
    an unknown detector an :class:`~termnorm.errors.UnknownNameError` listing the known
    ones); the rest: the module doc. Raises
    :class:`~termnorm.annotate.pipeline.DocumentError` for a text that is not a ``str``
    (``bytes`` included), or is too long, naming it (its position in a list).
    """
    from termnorm.annotate.detectors import DetectorSource, build_annotator
    from termnorm.annotate.spec import AnnotateSpec
    from termnorm.mentions.synonyms import as_sources
    from termnorm.search.build import build
    from termnorm.search.spec import PipelineSpec

    sources = as_sources(synonyms) if synonyms is not None else []
    files = [Path(str(s)) for s in sources if isinstance(s, str | Path)]
    pairs = [pair for s in sources if not isinstance(s, str | Path) for pair in s]
    loaded = None if index is None or isinstance(index, str | Path) else index
    folder = index if loaded is None else loaded.path
    own = {f.name for f in dataclasses.fields(AnnotateSpec)} - {"search"}
    options = {name: spec.pop(name) for name in own & set(spec)}
    objects = None if detectors is None or isinstance(detectors, str) else list(detectors)
    if objects is not None and not (objects and all(isinstance(d, str) for d in objects)):
        if options.get("ner") is not None:
            raise ValueError("give ner= with a detector choice, or the detector objects alone")
    else:
        options["detectors"], objects = detectors or (), None
    if max_chars is not None:
        options["window_chars"] = max_chars
    if isinstance(rules, str | Path):
        options["rules"], rules = Path(rules), None
    pipeline = PipelineSpec(index=folder, synonyms=tuple(files), **spec)  # type: ignore[arg-type]
    source = DetectorSource(loaded, tuple(pairs))
    annotator = build_annotator(
        AnnotateSpec(pipeline, k=k, **options),
        source,
        build_search=partial(build, index=loaded, synonyms=pairs or None),
        rules=rules,
        detectors=objects,  # type: ignore[arg-type]  # Detector objects, checked above
    )
    if isinstance(texts, str | bytes | bytearray) or not isinstance(texts, Sequence):
        return annotator.annotate(texts)  # type: ignore[arg-type]  # refused unless a str
    return [annotator.annotate(text, str(i)) for i, text in enumerate(texts)]
