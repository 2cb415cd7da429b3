"""Text in, concepts out: find the mentions of a document and normalize each.

:class:`Annotator` runs, per document:

1. **detect** — each detector over the text's windows (:func:`detect_in_windows`, sentence
   boundaries, a mention across a window edge kept once), then :func:`merge_spans` over the
   detectors' spans;
2. **normalize** — the distinct span texts of a batch of documents
   (:meth:`Annotator.annotate_many`: ``batch_docs`` at a time) in ONE call of
   :meth:`ContextMatcher.answer_in_context` over :func:`termnorm.search.build.build`'s
   matcher of the spec, each span with its own document as context (short forms the
   document defines are expanded, :mod:`termnorm.search.context`); a query text the
   annotator has searched before is answered from its memo (:class:`RowMemo`: the index and
   the spec do not change under an annotator, so neither does the answer);
3. **drop** — spans left with no candidate (none reached the spec's ``min_score``: not a
   concept) or refused by the normalizer (e.g. longer than its ``max_chars``; logged);
4. **assert** — the ConText flags of each kept span over :func:`sentence_spans`, with the
   rules of the document's language (:func:`~termnorm.annotate.languages.choose_language`:
   the document's ``lang``, else the annotator's ``language``, else detected, else English);
5. **qualify** — with ``findings="phenotypes"`` (the default), HPO's modifiers become
   attributes of the finding next to them and its other non-phenotype branches are dropped
   (:func:`~termnorm.annotate.modifiers.qualify`; HPO's diseases are not even searched:
   :attr:`Annotator.search`);
6. :class:`Annotation`\\ s sorted by ``(start, end)``.

**The normalizer decides the concept, a name it is written as goes first.** The candidates
come from the spec's search alone (strategy, synonyms, ranker, ``min_score``: one
configuration); when a dictionary span is a name of some of them (its ``concept_ids``, up to
the dictionary's key folding), those are ranked first (:func:`named_first`, the sieve rule:
a literal name beats a neighbour in embedding space). A span without names (the tagger's)
gets the normalizer's order.

**Bad input.** Empty or whitespace-only text has no annotation; a text that is not a
``str`` (``bytes`` included), is not valid Unicode (a lone surrogate, which no UTF-8 output
can hold) or is longer than ``max_document_chars`` raises :class:`DocumentError` naming the
document; :meth:`Annotator.annotate_many` reports such a document in its own
:class:`DocumentAnnotations` and goes on with the others. A document whose abbreviations Ab3P
cannot read (:class:`~termnorm.mentions.abbreviations.AbbreviationError`) is annotated
without its short forms, and its :class:`DocumentAnnotations` ``warning`` says so.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from termnorm.annotate.annotation import Annotation, RankedConcept
from termnorm.annotate.assertion import Assertion, assert_spans
from termnorm.annotate.coordination import coordination_spans
from termnorm.annotate.dictionary import DictionaryDetector
from termnorm.annotate.fuzzy import spelled
from termnorm.annotate.languages import AUTO, LanguageChoice, choose_language, parse_language
from termnorm.annotate.merge import merge_spans
from termnorm.annotate.modifiers import Findings, findings_search, qualify
from termnorm.annotate.sentences import sentence_spans
from termnorm.annotate.short_forms import short_form_spans
from termnorm.annotate.spans import Detector, Span
from termnorm.annotate.windows import DEFAULT_WINDOW_CHARS, detect_in_windows
from termnorm.encoders.language_coverage import warn_language_once
from termnorm.errors import DocumentError
from termnorm.search.identity import matcher_model
from termnorm.search.memo import DEFAULT_MEMO_TEXTS, RowMemo
from termnorm.search.query import lone_surrogate_problem

if TYPE_CHECKING:
    from termnorm.annotate.assertion_rules import AssertionRules
    from termnorm.index import TermIndex
    from termnorm.search.candidate import RowMatcher, RowResult
    from termnorm.search.filters import ConceptFilter
    from termnorm.search.spec import PipelineSpec

__all__ = [
    "DEFAULT_BATCH_DOCS",
    "DEFAULT_MAX_DOCUMENT_CHARS",
    "DEFAULT_MEMO_TEXTS",
    "Annotation",
    "Annotator",
    "DocumentAnnotations",
    "DocumentError",
    "RankedConcept",
    "RowMemo",
    "default_detector",
    "dictionary_detector",
    "named_first",
    "spec_filter",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_DOCUMENT_CHARS = 1_000_000
"""The longest document accepted (code points): a long article is ~100,000."""

DEFAULT_BATCH_DOCS = 64
"""Documents whose span texts :meth:`Annotator.annotate_many` normalizes in one call."""


DICTIONARY_CACHE = "dictionaries"
"""Folder under the termnorm cache where compiled dictionaries are kept."""

_DICTIONARIES_KEPT = 8  # per index: the service compiles one per synonym set and filter
_lock = threading.Lock()
_detectors: weakref.WeakKeyDictionary[TermIndex, dict[tuple[object, ...], DictionaryDetector]] = (
    weakref.WeakKeyDictionary()
)


class DocumentAnnotations(NamedTuple):
    """One document's annotations, or why it has none: ``error`` is set (and
    ``annotations`` empty) when the document was refused; ``warning``: the document was
    annotated, but its abbreviations could not be read (its short forms were not expanded)."""

    doc_id: str
    annotations: list[Annotation]
    error: str | None = None
    warning: str | None = None


def default_detector(spec: PipelineSpec, cache: str | Path | None = None) -> DictionaryDetector:
    """A :class:`DictionaryDetector` over the terms of ``spec``'s index and its domain
    synonym files, restricted to the concepts ``spec``'s filter lets through
    (:func:`dictionary_detector`)."""
    from termnorm.search.build import resolve_index

    return dictionary_detector(
        resolve_index(spec.index), spec.synonyms, cache=cache, concept_filter=spec_filter(spec)
    )


def spec_filter(spec: PipelineSpec) -> ConceptFilter:
    """The concepts ``spec`` may return (its namespaces and semantic types, wanted and not)."""
    from termnorm.search.filters import ConceptFilter

    return ConceptFilter.of(spec.namespaces, spec.semantic_types, spec.excluded_types)


def dictionary_detector(
    index: TermIndex,
    synonym_files: Iterable[str | Path] = (),
    pairs: Iterable[tuple[str, str]] = (),
    cache: str | Path | None = None,
    concept_filter: ConceptFilter | None = None,
) -> DictionaryDetector:
    """A :class:`DictionaryDetector` over ``index``'s terms, the synonyms of
    ``synonym_files`` (any format :func:`~termnorm.mentions.synonyms.read_synonyms` reads)
    and ``(concept_id, text)`` ``pairs``, keeping only the names of concepts that pass
    ``concept_filter`` (the spec's namespaces and semantic types: the dictionary finds no
    name of a concept the search could not return); compiled once per content under ``cache``
    (default: the termnorm cache's ``dictionaries/`` folder) and reused from there, and kept
    in memory per index (the last eight; until a synonym file changes), so a repeated call
    returns the same detector. A filter naming what the index lacks raises
    :class:`~termnorm.search.filters.FilterError`."""
    from termnorm.paths import cache_dir

    files = tuple(Path(p).resolve() for p in synonym_files)
    given = tuple(pairs)
    folder = Path(cache) if cache is not None else cache_dir() / DICTIONARY_CACHE
    stamps = tuple((str(p), p.stat().st_mtime_ns) for p in files)
    key = (stamps, given, str(folder), concept_filter)
    with _lock:
        per_index = _detectors.setdefault(index, {})
        if key not in per_index:
            per_index[key] = _compile_detector(index, files, given, folder, concept_filter)
            while len(per_index) > _DICTIONARIES_KEPT:  # a service adding synonyms: the last
                per_index.pop(next(iter(per_index)))
        return per_index[key]


def _compile_detector(
    index: TermIndex,
    files: Sequence[Path],
    pairs: Sequence[tuple[str, str]],
    folder: Path,
    concept_filter: ConceptFilter | None,
) -> DictionaryDetector:
    from termnorm.mentions.synonyms import read_synonyms
    from termnorm.search.parts import ConceptColumns

    synonyms = [
        (concept_id, text)
        for path in files
        for text, concept_ids in read_synonyms(path)
        for concept_id in concept_ids
    ]
    ids = index.concepts["concept_id"]
    resolved = [  # a synonym file's bare "D012878" is the index's "MESH:D012878"
        (cid if (row := index.resolve_id(cid)) is None else str(ids.iloc[row]), text)
        for cid, text in [*synonyms, *pairs]
    ]
    mask = concept_filter.mask(ConceptColumns.of(index)) if concept_filter else None
    concepts = None if mask is None else set(ids[mask])
    return DictionaryDetector.from_index(index, resolved, folder, concepts)


class Annotator:
    """Annotates documents with the concepts of ``spec`` (module doc for the steps).

    ``detectors``: the detectors, or a function that makes them on the first document
    (default: one :func:`default_detector`); ``rules``: the assertion rules of
    every document, whatever its language (default: the shipped rules of each document's
    language, :meth:`AssertionRules.for_language`); ``extra_rules``: rules added to the
    shipped ones of each language (a literal they share is replaced); ``language``: the
    documents' language (``"auto"``: detected per document; a document's own ``lang``
    wins); ``findings``: which concepts are findings (:class:`Findings`); ``k``: candidates
    kept per annotation; ``max_chars``: window size of the detectors; ``max_document_chars``:
    the longest document accepted. ``index``: the loaded index ``spec`` searches (``None``:
    ``spec.index``'s); ``build_search``: what builds the row matcher of :attr:`search`
    (default ``build``: a face's own space, synonym pairs or notices); ``matcher``: the row
    matcher to use as it is (tests, or a caller that built it from :attr:`search`). Building
    is lazy: the matcher and the default detector load on the first document.
    """

    def __init__(
        self,
        spec: PipelineSpec,
        detectors: Sequence[Detector] | Callable[[], Sequence[Detector]] | None = None,
        rules: AssertionRules | None = None,
        k: int = 5,
        max_chars: int = DEFAULT_WINDOW_CHARS,
        *,
        max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS,
        matcher: RowMatcher | None = None,
        build_search: Callable[[PipelineSpec], RowMatcher] | None = None,
        index: TermIndex | None = None,
        language: str = AUTO,
        extra_rules: AssertionRules | None = None,
        findings: Findings = Findings.PHENOTYPES,
        short_forms: bool = False,
        coordination: bool = True,
    ) -> None:
        if language.strip().lower() != AUTO:
            parse_language(language)  # an empty tag is refused here, not per document
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if max_document_chars < 1:
            raise ValueError(f"max_document_chars must be at least 1, got {max_document_chars}")
        if detectors is not None and not callable(detectors) and not detectors:
            raise ValueError("detectors is empty: give at least one, or None for the dictionary")
        self.spec = spec
        self.rules = rules
        self.extra_rules = extra_rules
        self.language = language
        self.findings = Findings(findings)
        self.short_forms = short_forms
        self.coordination = coordination
        self.k = k
        self.max_chars = max_chars
        self.max_document_chars = max_document_chars
        self._make = detectors if callable(detectors) else None
        self._detectors = None if detectors is None or callable(detectors) else list(detectors)
        self._matcher = matcher
        self._build_search = build_search
        self._index = index
        self._search: PipelineSpec | None = None
        self._memo: RowMemo | None = None

    @property
    def search(self) -> PipelineSpec:
        """The search the annotator runs: ``spec`` as its ``findings`` need it over its index
        (:func:`~termnorm.annotate.modifiers.findings_search`: HPO's diseases left out under
        ``phenotypes``), derived on first use."""
        if self._search is None:
            from termnorm.search.build import resolve_index

            index = self._index if self._index is not None else resolve_index(self.spec.index)
            self._search = findings_search(self.spec, self.findings, index)
        return self._search

    @property
    def detectors(self) -> list[Detector]:
        """The detectors (the default dictionary detector is built on first use)."""
        if self._detectors is None:
            made = self._make() if self._make is not None else [default_detector(self.search)]
            self._detectors = list(made)
        return self._detectors

    @property
    def matcher(self) -> RowMatcher:
        """The row matcher of :attr:`search` (built on first use by ``build_search``, else by
        ``build``, which caches it)."""
        if self._matcher is None:
            from termnorm.search.build import build

            self._matcher = (self._build_search or build)(self.search)
        return self._matcher

    @property
    def memo(self) -> RowMemo:
        """:attr:`matcher` behind the annotator's memo of answered texts (:class:`RowMemo`)."""
        if self._memo is None or self._memo.matcher is not self.matcher:
            self._memo = RowMemo(self.matcher)
        return self._memo

    def annotate(self, text: str, doc_id: str = "", lang: str | None = None) -> list[Annotation]:
        """The annotations of ``text``, sorted by ``(start, end)`` (the ``annotations`` of
        :meth:`annotate_document`); raises as it does."""
        return self.annotate_document(text, doc_id, lang).annotations

    def annotate_document(
        self, text: str, doc_id: str = "", lang: str | None = None
    ) -> DocumentAnnotations:
        """The annotations of ``text``, sorted by ``(start, end)`` (none for an empty or blank
        text), with the ``warning`` of a document whose abbreviations could not be read or
        whose declared ``lang`` has no assertion rules (English rules applied). ``lang``: the
        document's own language tag (wins over the annotator's ``language``). Raises
        :class:`DocumentError` (naming ``doc_id``) for a text that is not a ``str``, not
        valid Unicode, or longer than ``max_document_chars``. The first non-English document
        (its rule language) given an English-only model logs one warning per process
        (:mod:`termnorm.encoders.language_coverage`)."""
        self._check(text, doc_id)
        (done,) = self._annotate_batch([(doc_id, text, lang)])
        return done

    def language_of(self, text: str, lang: str | None = None) -> LanguageChoice:
        """The rule language of a document: its ``lang`` when given (and not ``auto``), else
        the annotator's ``language``, detected from ``text`` when ``auto``."""
        declared = lang if lang is not None and lang.strip().lower() != AUTO else self.language
        return choose_language(text, declared)

    def rules_of(self, choice: LanguageChoice) -> AssertionRules:
        """The assertion rules of a document whose language is ``choice``: ``rules`` when
        given, else the language's shipped rules plus ``extra_rules``."""
        from termnorm.annotate.assertion_rules import AssertionRules

        if self.rules is not None:
            return self.rules
        shipped = AssertionRules.for_language(choice.language)
        return shipped if self.extra_rules is None else shipped.extend(self.extra_rules)

    def annotate_many(
        self,
        docs: Iterable[tuple[str, object] | tuple[str, object, str | None]],
        batch_docs: int = DEFAULT_BATCH_DOCS,
    ) -> Iterator[DocumentAnnotations]:
        """One :class:`DocumentAnnotations` per ``(doc_id, text)`` or ``(doc_id, text,
        lang)``, in order, the same as :meth:`annotate_document` gives each; a document
        refused with :class:`DocumentError` gets its ``error`` and the others go on. The
        span texts of ``batch_docs`` documents at a time are normalized in one call (a
        result is yielded once its batch is done)."""
        if batch_docs < 1:
            raise ValueError(f"batch_docs must be at least 1, got {batch_docs}")
        batch: list[tuple[str, object, str | None]] = []
        for doc_id, text, *rest in docs:
            batch.append((doc_id, text, rest[0] if rest else None))
            if len(batch) == batch_docs:
                yield from self._annotate_batch(batch)
                batch = []
        yield from self._annotate_batch(batch)

    def _annotate_batch(
        self, docs: Sequence[tuple[str, object, str | None]]
    ) -> list[DocumentAnnotations]:
        """``docs`` annotated in order, their span texts normalized in one call; a refused
        document gets its ``error``."""
        refused: dict[int, str] = {}
        found: list[tuple[str, list[Span]]] = []
        for i, (doc_id, text, _) in enumerate(docs):
            try:
                self._check(text, doc_id)
            except DocumentError as exc:
                refused[i] = str(exc)
                continue
            assert isinstance(text, str)  # _check refuses anything else
            found.append((text, self.find_spans(text) if text.strip() else []))
        normalized = iter(self._normalize(found))
        out = []
        for i, (doc_id, text, lang) in enumerate(docs):
            if i in refused:
                out.append(DocumentAnnotations(doc_id, [], refused[i]))
                continue
            spans, results, warning = next(normalized)
            out.append(self._finish(doc_id, str(text), lang, spans, results, warning))
        return out

    def _finish(
        self,
        doc_id: str,
        text: str,
        lang: str | None,
        spans: Sequence[Span],
        results: Sequence[RowResult | None],
        warning: str | None,
    ) -> DocumentAnnotations:
        """A document's annotations from its spans and their normalizer results (steps 3
        to 6 of the module)."""
        if not spans:
            return DocumentAnnotations(doc_id, [])
        kept = [
            (span, result)
            for span, result in zip(spans, results, strict=True)
            if result is not None
        ]
        from termnorm.annotate.assertion_rules import RuleLanguage

        choice = self.language_of(text, lang)
        if choice.language is not RuleLanguage.EN:
            warn_language_once(matcher_model(self.matcher), [text], lambda _: True, "documents")
        sentences = sentence_spans(text)
        assertions = assert_spans(
            text, [span for span, _ in kept], self.rules_of(choice), sentences=sentences
        )
        annotations = [
            _annotation(doc_id, span, result, flags, choice)
            for (span, result), flags in zip(kept, assertions, strict=True)
        ]
        if self.findings is Findings.PHENOTYPES:
            types = [result.candidates[0].semantic_types for _, result in kept]
            annotations = qualify(text, annotations, types, sentences)
        return DocumentAnnotations(doc_id, annotations, warning=_join(warning, _unruled(choice)))

    def find_spans(self, text: str) -> list[Span]:
        """Every detector's spans over ``text``'s windows, merged (steps 1 of the module);
        with ``short_forms``, the short forms of found long forms too
        (:func:`~termnorm.annotate.short_forms.short_form_spans`); with ``coordination``, the
        conjuncts that share a part with a found name
        (:func:`~termnorm.annotate.coordination.coordination_spans`)."""
        found = [
            span
            for detector in self.detectors
            for span in detect_in_windows(text, detector, max_chars=self.max_chars)
        ]
        merged = merge_spans(found)
        if self.short_forms:
            merged = merge_spans([*merged, *short_form_spans(text, merged)])
        if self.coordination:  # conjuncts overlap the names they share a part with: kept
            dictionaries = [d for d in self.detectors if isinstance(d, DictionaryDetector)]
            merged += [s for d in dictionaries for s in coordination_spans(d, text, merged)]
            merged.sort()
        return merged

    def _check(self, text: object, doc_id: str) -> None:
        if isinstance(text, bytes | bytearray):
            raise DocumentError(doc_id, "got bytes: decode it first, e.g. text.decode('utf-8')")
        if not isinstance(text, str):
            got = "None" if text is None else type(text).__name__
            raise DocumentError(doc_id, f"expected the document text as a str, got {got}")
        if len(text) > self.max_document_chars:
            raise DocumentError(
                doc_id,
                f"{len(text):,} characters, over the limit of {self.max_document_chars:,}: "
                "split it, or raise max_document_chars (--max-document-chars)",
            )
        problem = lone_surrogate_problem(text)
        if problem is not None:
            raise DocumentError(doc_id, problem)

    def _normalize(
        self, documents: Sequence[tuple[str, list[Span]]]
    ) -> list[tuple[list[Span], list[RowResult | None], str | None]]:
        """Per ``(text, spans)`` document: its spans, the normalizer's result per span
        (``None``: no candidate) and why its abbreviations could not be read (``None``:
        read). One call for the distinct span texts of every document, each with its own
        document as context."""
        from termnorm.search.context import ContextMatcher

        queries = [
            (span_text, text)
            for text, spans in documents
            for span_text in dict.fromkeys(span.query or span.text for span in spans)
        ]
        if not queries:  # no span anywhere: the matcher is not even built
            return [(spans, [], None) for _, spans in documents]
        answered = ContextMatcher(self.memo).answer_in_context(
            [q for q, _ in queries], [c for _, c in queries], self.k
        )
        by_query = {
            query: (result, reason)
            for query, result, reason in zip(
                queries, answered.results, answered.unread, strict=True
            )
        }
        out: list[tuple[list[Span], list[RowResult | None], str | None]] = []
        for text, spans in documents:
            results: list[RowResult | None] = []
            for span in spans:
                result = spelled(by_query[(span.query or span.text, text)][0], span)
                if result.error is not None:
                    logger.warning("span %r dropped: %s", span.text, result.error)
                results.append(named_first(result, span.concept_ids) if result.candidates else None)
            reasons = (by_query[(span.query or span.text, text)][1] for span in spans)
            out.append((spans, results, next((r for r in reasons if r is not None), None)))
        return out


def named_first(result: RowResult, named: Sequence[str]) -> RowResult:
    """``result`` with the candidates among ``named`` (the concepts a dictionary span is a
    name of) moved ahead of the others, each group in the normalizer's order, ranks renumbered.

    The sieve rule: a span that IS one of a concept's names (up to the dictionary's key
    folding) is that concept; the normalizer still orders the concepts that share the name,
    and decides alone when none of them is among its candidates or the span has no names
    (a tagger's span)."""
    chosen = set(named)
    first = [c for c in result.candidates if c.concept_id in chosen]
    if not first or first[0] is result.candidates[0]:
        return result
    rest = [c for c in result.candidates if c.concept_id not in chosen]
    ranked = [c._replace(rank=i) for i, c in enumerate([*first, *rest], start=1)]
    return result._replace(candidates=ranked)


def _unruled(choice: LanguageChoice) -> str | None:
    """The warning of a document whose declared language has no shipped rules."""
    if choice.declared is None:
        return None
    return (
        f"no assertion rules for the declared language {choice.declared!r}: English rules "
        "applied (declare en, fr, de, es or nl, or add rules with --rules)"
    )


def _join(*warnings: str | None) -> str | None:
    """The given warnings as one ("; "-joined), ``None`` when there is none."""
    given = [w for w in warnings if w is not None]
    return "; ".join(given) if given else None


def _annotation(
    doc_id: str, span: Span, result: RowResult, flags: Assertion, choice: LanguageChoice
) -> Annotation:
    top = result.candidates[0]
    return Annotation(
        doc_id=doc_id,
        start=span.start,
        end=span.end,
        text=span.text,
        concept_id=top.concept_id,
        name=top.name,
        score=top.score,
        detector=span.detector,
        candidates=tuple((c.concept_id, c.name, c.score) for c in result.candidates),
        matched_term=top.matched_term,
        expanded_from=top.expanded_from,
        expansion=top.expansion,
        expansion_source=top.expansion_source,
        assertion_language=choice.language.value,
        assertion_language_source=choice.source.value,
        negated=flags.negated,
        hypothetical=flags.hypothetical,
        historical=flags.historical,
        family=flags.family,
    )
