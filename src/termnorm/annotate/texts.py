"""``termnorm.annotate(text_or_texts, index=..., **spec fields)``: the Python face of the
annotation pipeline (what :func:`termnorm.api.annotate` and a call of the
``termnorm.annotate`` package itself run).

The keywords are those of :func:`termnorm.normalize`: ``index`` (a loaded
:class:`~termnorm.index.TermIndex`, an index folder, or ``None`` for the default index),
``synonyms`` (a synonym file, a list of files, or ``(concept_id, text)`` pairs: added to the
search AND to the dictionary detector) and the :class:`~termnorm.search.spec.PipelineSpec`
fields (``min_score``, ``strategy``, ``ranker`` as a folder, ...). ``ner``: a span tagger
folder (``termnorm ner train``); ``detectors``: ``"dictionary"``, ``"tagger"`` or ``"both"``
(default: the tagger with ``ner``, the dictionary without), or the detector objects themselves.
The built search, the compiled dictionary and the loaded tagger are cached (by ``build`` and by the dictionary cache), so repeated calls
cost only the detection and the span searches.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from termnorm.annotate.annotation import Annotation
from termnorm.annotate.detectors import DetectorChoice, select_detectors
from termnorm.annotate.languages import AUTO
from termnorm.annotate.pipeline import (
    DEFAULT_MAX_DOCUMENT_CHARS,
    Annotator,
    dictionary_detector,
    spec_filter,
)
from termnorm.annotate.spans import Detector
from termnorm.annotate.windows import DEFAULT_WINDOW_CHARS

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
    ner: str | Path | None = None,
    detectors: Sequence[Detector] | DetectorChoice | str | None = None,
    rules: AssertionRules | None = None,
    language: str = AUTO,
    max_chars: int = DEFAULT_WINDOW_CHARS,
    max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS,
    **spec: Any,
) -> list[Annotation] | list[list[Annotation]]:
    """The annotations of one text (a list), or of each of several texts (a list of lists;
    doc ids are the positions, ``"0"``, ``"1"``, ...).

    ``spec``: :class:`~termnorm.search.spec.PipelineSpec` fields (an unknown one is a
    ``TypeError``); ``ner`` and ``detectors``: the module doc; ``rules``, ``language`` (``"auto"``: detected per text; else
    en, fr, de, es or nl for every text), ``max_chars``, ``max_document_chars``: as for
    :class:`~termnorm.annotate.pipeline.Annotator`. Raises
    :class:`~termnorm.annotate.pipeline.DocumentError` for a text that is not a ``str``
    (``bytes`` included), or is too long, naming it (its position in a list).
    """
    from termnorm.mentions.synonyms import as_sources
    from termnorm.search.build import build, resolve_index
    from termnorm.search.spec import PipelineSpec

    sources = as_sources(synonyms) if synonyms is not None else []
    files = [Path(str(s)) for s in sources if isinstance(s, str | Path)]
    pairs = [pair for s in sources if not isinstance(s, str | Path) for pair in s]
    loaded = None if index is None or isinstance(index, str | Path) else index
    folder = index if loaded is None else loaded.path
    pipeline = PipelineSpec(index=folder, synonyms=tuple(files), **spec)  # type: ignore[arg-type]
    matcher = build(pipeline, loaded, synonyms=pairs or None)

    def dictionary() -> Detector:
        term_index = loaded if loaded is not None else resolve_index(pipeline.index)
        return dictionary_detector(
            term_index, pipeline.synonyms, pairs, concept_filter=spec_filter(pipeline)
        )

    if detectors is None or isinstance(detectors, str):
        chosen = select_detectors(detectors, ner, pipeline, dictionary)
    elif ner is not None:
        raise ValueError("give ner= with a detector choice, or the detector objects alone")
    else:
        chosen = list(detectors)
    annotator = Annotator(
        pipeline,
        chosen,
        rules,
        k,
        max_chars,
        max_document_chars=max_document_chars,
        matcher=matcher,
        language=language,
    )
    if isinstance(texts, str | bytes | bytearray) or not isinstance(texts, Sequence):
        return annotator.annotate(texts)  # type: ignore[arg-type]  # refused unless a str
    return [annotator.annotate(text, str(i)) for i, text in enumerate(texts)]
