"""Small helpers shared by the loaders: reading lines, term keys, the record union.

``iter_lines`` yields ``(line_number, text)`` with the line ending removed, so every loader
can name the file and line in an :class:`~termnorm.errors.InputFormatError`, undecodable
bytes included (:class:`~termnorm.io.lines.DecodedLines`). Files ending in ``.gz`` are
decompressed on the fly; a UTF-8 byte-order mark is ignored.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors
from termnorm.io.lines import DecodedLines
from termnorm.kg.records import Concept, LoadReport, Relation, Term

_UTF8 = {"utf-8", "utf8", "utf-8-sig"}

Record = Concept | Term | Relation
"""What a loader yields: a concept before its terms; relations may come at any time."""


ENCODING_HINT = (
    "give the file's encoding with --encoding (e.g. latin-1, cp1252; '#encoding=...' after "
    "an --add, encoding= in the loader options)"
)
"""What to do about undecodable bytes in a source whose loader takes an ``encoding``."""
UTF8_HINT = "this format is read as UTF-8: convert the file (e.g. iconv -f latin1 -t utf-8)"
"""What to do about undecodable bytes in a source read as UTF-8 only (OBO, UMLS, MEDIC)."""


def decoded_lines(path: Path, encoding: str | None = None) -> DecodedLines:
    """The lines of ``path`` (``.gz`` transparently), decoded with ``encoding`` (``None``: a
    format read as UTF-8 only; a byte-order mark is skipped); missing → clear error.
    Undecodable bytes raise :class:`InputFormatError` at their ``FILE:LINE``."""
    if not path.is_file():
        raise InputFormatError(path, None, "file not found")
    codec = DEFAULT_ENCODING if encoding is None or encoding.lower() in _UTF8 else encoding
    hint = UTF8_HINT if encoding is None else ENCODING_HINT
    return DecodedLines(path, codec, DecodeErrors.STRICT, hint)


def iter_lines(path: Path, encoding: str | None = None) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` for each line of ``path`` (1-based, line ending stripped);
    see :func:`decoded_lines`."""
    lines = decoded_lines(path, encoding)
    for text in lines:
        yield lines.line, text.rstrip("\r\n")


def clean(text: str) -> str:
    """Collapse runs of whitespace and strip: the form in which a term is stored."""
    return " ".join(text.split())


def decode_entities(texts: list[str], report: LoadReport) -> list[str]:
    """``texts`` with HTML character references decoded (``&apos;`` → ``'``, ``&#246;`` → ``ö``).

    BioSyn's MEDIC-derived files are HTML-escaped; a line (a call) that changes is counted
    under ``notes["lines with HTML entities (decoded)"]``.
    """
    plain = [html.unescape(text) for text in texts]
    if plain != texts:
        report.note("lines with HTML entities (decoded)")
    return plain


def term_key(text: str) -> str:
    """Key under which two surface forms of one concept count as duplicates (case-insensitive)."""
    return clean(text).casefold()


def dedup_terms(
    concept_id: str, items: Iterable[tuple[str, str, str]], report: LoadReport
) -> list[Term]:
    """Terms from ``(text, lang, source)`` items, the first kept one preferred.

    Whitespace is collapsed; empty strings are dropped with reason ``term: empty``, repeats
    (case-insensitive) with ``term: duplicate (case-insensitive)``; kept terms are counted
    under ``kept["terms"]``.
    """
    terms: list[Term] = []
    seen: set[str] = set()
    for raw, lang, source in items:
        text = clean(raw)
        key = text.casefold()
        if not text:
            report.drop("term: empty")
        elif key in seen:
            report.drop("term: duplicate (case-insensitive)")
        else:
            seen.add(key)
            terms.append(Term(concept_id, text, lang=lang, source=source, is_preferred=not terms))
    report.keep("terms", n=len(terms))
    return terms


def concept_terms(
    concept_id: str,
    name: str,
    synonyms: Iterable[str],
    report: LoadReport,
    *,
    lang: str = "en",
    source: str = "",
) -> list[Term]:
    """The name (preferred) then each synonym, deduplicated and counted (see :func:`dedup_terms`)."""
    items = [(text, lang, source) for text in [name, *synonyms]]
    return dedup_terms(concept_id, items, report)


def require_columns(path: Path, found: Sequence[str], needed: Iterable[str], kind: str) -> None:
    """Refuse a table whose header (``found``) lacks a column of ``needed``, naming the file,
    the columns it has and the ``kind`` of table expected (``"LOINC's Loinc.csv"``).

    Raises:
        InputFormatError: a column is missing (line 1).
    """
    missing = [name for name in needed if name not in found]
    if missing:
        raise InputFormatError(
            path,
            1,
            f"no column {', '.join(missing)} in the header (found: {', '.join(found)}); "
            f"is this {kind}?",
        )
