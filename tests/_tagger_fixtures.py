"""Three sentences with their mentions, as tagged documents and as a GSC+ corpus, for the
span tagger's tests."""

from __future__ import annotations

import pytest

from termnorm.training.tagger_data import TaggedDocument

SENTENCES = [
    ("Patients with asthma were treated.", ["asthma"]),
    ("The migraine came back after the heart attack.", ["migraine", "heart attack"]),
    ("No anemia was found in the group.", ["anemia"]),
]


def tagged_document(index: int, text: str, mentions: list[str]) -> TaggedDocument:
    """``text`` with the spans of ``mentions`` (first occurrence each)."""
    spans = tuple(sorted((text.index(m), text.index(m) + len(m)) for m in mentions))
    return TaggedDocument(str(index), text, spans)


DOCUMENTS = [tagged_document(i, text, mentions) for i, (text, mentions) in enumerate(SENTENCES)]


def gscplus_text(documents: list[TaggedDocument]) -> str:
    """``documents`` in GSC+ layout (made-up HPO IDs)."""
    blocks = []
    for d in documents:
        lines = [d.doc_id, d.text] + [f"{s}\t{e}\t{d.text[s:e]}\tHP:{s}" for s, e in d.spans]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def int8_or_skip() -> None:
    """Skip the test where no int8 layout is exact on this CPU (the int8 runtime is refused)."""
    from termnorm.encoders.int8_kernel import Int8KernelError, int8_kernel

    try:
        int8_kernel()
    except Int8KernelError as exc:
        pytest.skip(f"no exact int8 layout on this CPU: {exc}")
