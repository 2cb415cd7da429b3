"""BioSyn ``.concept`` files (BC5CDR and NCBI as distributed by BioSyn).

One file per document (a folder of ``*.concept`` files, or one file), one mention a line::

    PMID||start|end||type||mention||ids

``ids`` is one MeSH ID, several joined by ``|`` (composite) or ``-1`` (unlinkable). BioSyn's
preprocessed files write a composite mention as its parts joined by ``|``
("breast cancer|ovarian cancer"); those parts are kept and the text reads "… and …".
"""

from __future__ import annotations

from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.mentions._lines import field_int, preview, read_lines, require_exists
from termnorm.mentions.mention import Mention, make_mention

__all__ = ["concept_files", "read_biosyn"]

_EXPECTED = "expected 'PMID||start|end||type||mention||id' (format biosyn)"


def concept_files(path: Path) -> list[Path]:
    """``path`` itself, or the sorted ``*.concept`` files of a folder (none is an error)."""
    require_exists(path)
    if not path.is_dir():
        return [path]
    files = sorted(path.glob("*.concept"))
    if not files:
        raise InputFormatError(path, None, "folder has no *.concept file (format biosyn)")
    return files


def _parse_line(path: Path, line_no: int, line: str) -> Mention:
    fields = line.split("||")
    if len(fields) != 5 or "|" not in fields[1]:
        raise InputFormatError(path, line_no, f"{_EXPECTED}; got {preview(line)}")
    doc_id, span, _etype, text, ids = fields
    start, end = span.split("|", 1)
    parts = tuple(text.split("|")) if "|" in text else ()
    return make_mention(
        " and ".join(parts) if parts else text,
        ids,
        doc_id.strip(),
        field_int(path, line_no, start, "start offset"),
        field_int(path, line_no, end, "end offset"),
        location=f"{path}:{line_no}",
        parts=parts,
    )


def read_biosyn(path: Path) -> list[Mention]:
    """Mentions of a ``.concept`` file or folder, files in name order, lines in file order."""
    mentions: list[Mention] = []
    for file in concept_files(path):
        for line_no, line in enumerate(read_lines(file), start=1):
            if line.strip():
                mentions.append(_parse_line(file, line_no, line))
    return mentions
