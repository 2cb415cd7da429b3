"""``read_documents(path, format=None)``: the text of each document of an annotated dataset.

Mentions keep only their document's ID (:attr:`~termnorm.mentions.Mention.doc_id`); the
texts come from this separate ``doc_id -> text`` mapping, read once per corpus, for what
needs the context of a mention (abbreviations its document defines,
:mod:`termnorm.mentions.abbreviations`). Formats that carry the text: PubTator (title and
abstract), GSC+ (the text line), PhenoBERT (``corpus/<doc>``); the mention offsets index
into these texts. BioSyn ``.concept`` files and ``id<TAB>text`` files hold mentions only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from termnorm.errors import EmptyResultError, InputFormatError
from termnorm.mentions._lines import require_exists
from termnorm.mentions.hpo import read_gscplus_documents, read_phenobert_documents
from termnorm.mentions.mention import MentionFormat
from termnorm.mentions.pubtator import read_pubtator_documents
from termnorm.mentions.reader import detect_format, parse_format

__all__ = ["DOCUMENT_FORMATS", "read_documents"]

_READERS: dict[MentionFormat, Callable[[Path], dict[str, str]]] = {
    MentionFormat.PUBTATOR: read_pubtator_documents,
    MentionFormat.GSCPLUS: read_gscplus_documents,
    MentionFormat.PHENOBERT: read_phenobert_documents,
}

DOCUMENT_FORMATS = frozenset(_READERS)
"""The mention formats that carry their documents' text."""


def read_documents(path: str | Path, format: MentionFormat | str | None = None) -> dict[str, str]:
    """``doc_id -> text`` of a dataset file or folder, documents in file order.

    ``format`` defaults to :func:`~termnorm.mentions.detect_format`. A format without
    document text (``biosyn``, ``tsv``) and a dataset without any document raise errors that
    name the file.
    """
    path = require_exists(Path(path))
    fmt = detect_format(path) if format is None else parse_format(format)
    reader = _READERS.get(fmt)
    if reader is None:
        with_text = ", ".join(f.value for f in _READERS)
        raise InputFormatError(
            path,
            None,
            f"format {fmt.value} holds mentions only, no document text (formats with it: "
            f"{with_text}); run without abbreviation expansion (mode 'none')",
        )
    documents = reader(path)
    if not documents:
        raise EmptyResultError(f"{path}: no document text found (format {fmt.value})")
    return documents
