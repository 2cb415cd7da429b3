"""The documents ``annotate`` reads and the annotations it writes.

**Inputs** (:func:`read_inputs`), each an :class:`InputDocument` ``(doc_id, text, error)``:

- a literal text (an argument that is no existing path): one document, id ``"text"``;
- a ``.txt`` file (any file that is neither JSON Lines nor PubTator): one document, id the
  file stem; the text is read as written (CRLF kept, a BOM dropped), so offsets index into it;
- a folder: each ``*.txt`` file in it (sorted by name), id the file stem;
- JSON Lines (``.jsonl``/``.ndjson``): one document per line, its ``id_field`` and
  ``text_field`` (default ``id`` and ``text``), and its language tag when it has a string
  ``lang`` field (the assertion rules of that language apply, :mod:`termnorm.annotate.languages`);
- PubTator (a file whose first line is ``PMID|t|…``): title and abstract joined by one
  newline, as :mod:`termnorm.mentions.pubtator` reads them (offsets agree with PubTator's).

An empty, binary (NUL bytes) or non-UTF-8 file given alone raises
:class:`~termnorm.errors.InputFormatError` naming its path; inside a folder or a JSON Lines
file, a bad document (or line) becomes an :class:`InputDocument` with its ``error`` (naming
the file, and the line) and the others are read.

**Outputs**: JSON Lines (:func:`jsonl_rows`: one annotation per line, scores rounded to 6
decimals; one ``{"doc_id", "error"}`` line for a refused document and one
``{"doc_id", "annotations": 0}`` line for a document with nothing found, so every document
is in the output; a ``warning`` on each row of a document annotated without its
abbreviations), PubTator
(:func:`pubtator_lines`) and BRAT standoff (:func:`brat_ann`). PubTator and BRAT cannot hold a line break inside a field,
so line-break characters there are written as spaces, which keeps every offset valid.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from termnorm.annotate.annotation import Annotation
from termnorm.errors import InputFormatError
from termnorm.mentions.pubtator import TEXT_LINE, read_pubtator_documents
from termnorm.search.candidate import SCORE_DECIMALS

__all__ = [
    "LITERAL_DOC_ID",
    "SCORE_DECIMALS",
    "InputDocument",
    "OutputFormat",
    "brat_ann",
    "brat_file_stem",
    "jsonl_rows",
    "plan_inputs",
    "pubtator_lines",
    "read_inputs",
    "read_text_file",
    "source_is_collection",
    "source_is_text",
]

LITERAL_DOC_ID = "text"
"""The doc id of a literal text argument."""

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
_PATH_LIKE = re.compile(r"^\S+\.(txt|jsonl|ndjson|pubtator)$", re.IGNORECASE)
_LINE_BREAKS = re.compile(r"[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\t]")
_UNSAFE_STEM = re.compile(r"[^\w.-]")


class OutputFormat(str, Enum):
    """How ``annotate`` writes its annotations."""

    JSONL = "jsonl"
    PUBTATOR = "pubtator"
    BRAT = "brat"


class InputDocument(NamedTuple):
    """A document to annotate (``text``), or why it could not be read (``error``);
    ``lang``: the language tag the document declares (JSON Lines ``lang``), else ``None``."""

    doc_id: str
    text: str | None
    error: str | None = None
    lang: str | None = None


# ------------------------------------------------------------------ reading
def read_inputs(
    source: str, *, id_field: str = "id", text_field: str = "text"
) -> Iterator[InputDocument]:
    """The documents of ``source`` (module doc: literal text, file, folder, JSON Lines,
    PubTator). Raises :class:`InputFormatError` for a missing file named like one
    (``notes.txt``), an unreadable single file, and a folder without ``.txt`` files."""
    return (read() for read in plan_inputs(source, id_field=id_field, text_field=text_field))


def plan_inputs(
    source: str, *, id_field: str = "id", text_field: str = "text"
) -> list[Callable[[], InputDocument]]:
    """One reader per document of ``source``, in order (what :func:`read_inputs` calls): the
    count of documents, and a batch job skips the finished ones without reading them (a
    folder's files are read when their reader is called). Raises as :func:`read_inputs`."""
    path = _existing_path(source)
    if path is None:
        if _PATH_LIKE.match(source.strip()):
            raise InputFormatError(
                source, None, "no such file; give an existing file or folder, or the text itself"
            )
        return [functools.partial(InputDocument, LITERAL_DOC_ID, source)]
    if path.is_dir():
        return [functools.partial(_folder_document, file) for file in _folder_files(path)]
    if path.suffix.lower() in JSONL_SUFFIXES:
        return [
            functools.partial(_jsonl_document, path, line_no, raw, id_field, text_field)
            for line_no, raw in _jsonl_lines(path)
        ]
    text = read_text_file(path)
    if TEXT_LINE.match(text.lstrip()):
        documents = read_pubtator_documents(path).items()
        return [functools.partial(InputDocument, doc_id, body) for doc_id, body in documents]
    return [functools.partial(InputDocument, path.stem, text)]


def source_is_text(source: str) -> bool:
    """Whether :func:`read_inputs` reads ``source`` as the text itself (no such path)."""
    return _existing_path(source) is None


def source_is_collection(source: str) -> bool:
    """Whether ``source`` is a folder or a JSON Lines file: documents that are each other's
    neighbours (a bad one is a row among them), not one text or file given alone."""
    path = _existing_path(source)
    return path is not None and (path.is_dir() or path.suffix.lower() in JSONL_SUFFIXES)


def _existing_path(source: str) -> Path | None:
    if "\n" in source or "\x00" in source:
        return None
    try:
        path = Path(source)
        return path if path.exists() else None
    except (OSError, ValueError):  # a name too long for the file system is a text
        return None


def read_text_file(path: Path) -> str:
    """The text of a UTF-8 file as written (BOM dropped); :class:`InputFormatError` naming
    ``path`` when it is empty (or blank), binary or not UTF-8."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFormatError(
            path, None, f"not UTF-8 text ({exc.reason} at byte {exc.start}); convert it to UTF-8"
        ) from exc
    if "\x00" in text:
        raise InputFormatError(path, None, "a binary file (NUL bytes); give a UTF-8 text file")
    if not text.strip():
        raise InputFormatError(path, None, "an empty file; it has no text to annotate")
    return text


def _folder_files(folder: Path) -> list[Path]:
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".txt" and p.is_file())
    if not files:
        raise InputFormatError(folder, None, "a folder without .txt files; nothing to annotate")
    return files


def _folder_document(path: Path) -> InputDocument:
    try:
        return InputDocument(path.stem, read_text_file(path))
    except InputFormatError as exc:
        return InputDocument(path.stem, None, str(exc))


def _jsonl_lines(path: Path) -> list[tuple[int, bytes]]:
    """The non-blank lines of a JSON Lines file with their line numbers."""
    data = path.read_bytes()
    if b"\x00" in data:
        raise InputFormatError(path, None, "a binary file (NUL bytes); give UTF-8 JSON Lines")
    if not data.strip():
        raise InputFormatError(path, None, "an empty file; it has no document to annotate")
    return [(n, raw) for n, raw in enumerate(data.splitlines(), start=1) if raw.strip()]


def _jsonl_document(
    path: Path, line_no: int, raw: bytes, id_field: str, text_field: str
) -> InputDocument:
    where = f"{path.name}:{line_no}"
    try:
        record = json.loads(raw.decode("utf-8-sig" if line_no == 1 else "utf-8"))
    except UnicodeDecodeError as exc:
        return InputDocument(where, None, f"{path}:{line_no}: not UTF-8 text ({exc.reason})")
    except json.JSONDecodeError as exc:
        return InputDocument(where, None, f"{path}:{line_no}: not JSON ({exc.msg})")
    if not isinstance(record, dict):
        return InputDocument(where, None, f"{path}:{line_no}: expected a JSON object")
    doc_id = str(record[id_field]) if record.get(id_field) is not None else where
    missing = [f for f in (id_field, text_field) if f not in record]
    if missing:
        names = ", ".join(repr(f) for f in missing)
        return InputDocument(
            doc_id,
            None,
            f"{path}:{line_no}: no field {names} (fields: {', '.join(map(str, record))}); "
            "name them with --id-field/--text-field",
        )
    text = record[text_field]
    if not isinstance(text, str):
        got = "null" if text is None else type(text).__name__
        return InputDocument(doc_id, None, f"{path}:{line_no}: {text_field!r} is {got}, not text")
    lang = record.get("lang")
    if lang is not None and (not isinstance(lang, str) or not lang.strip()):
        return InputDocument(
            doc_id,
            None,
            f"{path}:{line_no}: 'lang' is {lang!r}; give a language tag such as \"fr\"",
        )
    return InputDocument(doc_id, text, lang=lang)


# ------------------------------------------------------------------ writing
def jsonl_rows(
    doc_id: str,
    annotations: Sequence[Annotation],
    error: str | None = None,
    warning: str | None = None,
) -> list[dict[str, Any]]:
    """The JSON Lines rows of one document: one per annotation (:meth:`Annotation.to_dict`,
    scores rounded to :data:`SCORE_DECIMALS` decimals), one ``{"doc_id", "error"}`` row for
    a refused document, or one ``{"doc_id", "annotations": 0}`` row when nothing was found;
    ``warning`` (the document's abbreviations could not be read) is added to each row."""
    if error is not None:
        return [{"doc_id": doc_id, "error": error}]
    rows = [a.to_dict() for a in annotations] or [{"doc_id": doc_id, "annotations": 0}]
    for row in rows:
        if "score" in row:
            row["score"] = round(row["score"], SCORE_DECIMALS)
        for candidate in row.get("candidates", ()):
            candidate["score"] = round(candidate["score"], SCORE_DECIMALS)
        if warning is not None:
            row["warning"] = warning
    return rows


def _flat(text: str) -> str:
    """``text`` with each line break (and tab) as one space: same length, same offsets."""
    return _LINE_BREAKS.sub(" ", text)


def pubtator_lines(doc_id: str, text: str, annotations: Sequence[Annotation]) -> list[str]:
    """``doc|t|title``, ``doc|a|abstract``, one ``doc<TAB>start<TAB>end<TAB>text<TAB>Concept
    <TAB>concept_id`` line per annotation, and a blank line. The title is the text up to its
    first ``\\n``, the abstract the rest: PubTator's offsets (one character between title and
    abstract) are then the document's."""
    title, _, abstract = text.partition("\n")
    lines = [f"{doc_id}|t|{_flat(title)}", f"{doc_id}|a|{_flat(abstract)}"]
    lines += [
        f"{doc_id}\t{a.start}\t{a.end}\t{_flat(a.text)}\tConcept\t{a.concept_id}"
        for a in annotations
    ]
    return [*lines, ""]


FLAG_ATTRIBUTES = (
    ("negated", "Negated"),
    ("hypothetical", "Hypothetical"),
    ("historical", "Historical"),
    ("family", "Family"),
)


def brat_ann(annotations: Sequence[Annotation]) -> str:
    """The ``.ann`` standoff of one document: ``T<n>\\tConcept start end\\ttext``,
    ``#<n>\\tAnnotatorNotes T<n>\\tconcept_id name`` (then ``; modifiers: HP:0012825 Mild``
    when modifiers qualify it), and ``A<m>\\tNegated T<n>`` (also
    ``Hypothetical``, ``Historical``, ``Family``) for each flag set."""
    lines = []
    attribute = 0
    for n, a in enumerate(annotations, start=1):
        lines.append(f"T{n}\tConcept {a.start} {a.end}\t{_flat(a.text)}")
        mods = f"; modifiers: {', '.join(a.modifiers)}" if a.modifiers else ""
        lines.append(f"#{n}\tAnnotatorNotes T{n}\t{a.concept_id} {_flat(a.name)}{_flat(mods)}")
        for field, name in FLAG_ATTRIBUTES:
            if getattr(a, field):
                attribute += 1
                lines.append(f"A{attribute}\t{name} T{n}")
    return "".join(f"{line}\n" for line in lines)


def brat_file_stem(doc_id: str) -> str:
    """A file name for ``doc_id``'s ``.txt``/``.ann``: characters other than letters, digits,
    ``.``, ``-`` and ``_`` become ``_`` (so an id cannot leave the output folder)."""
    stem = _UNSAFE_STEM.sub("_", doc_id).lstrip(".")
    return stem or "_"
