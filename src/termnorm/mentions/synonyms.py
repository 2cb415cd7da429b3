"""Domain synonyms and training mentions as ``(text, gold_ids)`` pairs, from any mention file.

A synonym file is a user's ``concept_id<TAB>text`` list (the ``tsv`` mention format) or any
annotated mention file :func:`~termnorm.mentions.read_mentions` reads (e.g. the
NCBI-disease training split, a BC5CDR folder of ``.concept`` files). Every mention becomes one
pair; a composite mention whose dataset gives its parts, one per gold ID (BioSyn's
``|``-split mentions), becomes one pair per part, part i with gold ID i. Other composite and
unlinkable mentions are passed on as they are: the consumers
(:meth:`termnorm.search.domain.SearchSpace.with_synonyms`,
:func:`termnorm.training.triplet_data.build_triplet_corpus`) drop and count them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from termnorm.mentions.mention import Mention, MentionFormat, MentionKind
from termnorm.mentions.reader import read_mentions

__all__ = [
    "SynonymSource",
    "SynonymSources",
    "as_sources",
    "load_synonyms",
    "mention_pairs",
    "read_synonyms",
]

SynonymSource = str | Path | Iterable[tuple[str, str]]
"""A synonym file, or ``(concept_id, text)`` pairs."""

SynonymSources = SynonymSource | Sequence[str | Path]
"""One :data:`SynonymSource`, or several synonym files."""


def as_sources(sources: SynonymSources) -> list[SynonymSource]:
    """``sources`` as a list of single sources: a path → ``[path]``; a list whose items are
    all paths → those paths; anything else (``(concept_id, text)`` pairs) → ``[pairs]``."""
    if isinstance(sources, str | Path):
        return [sources]
    items = list(sources)
    if items and all(isinstance(item, str | Path) for item in items):
        return [Path(item) for item in items]  # type: ignore[arg-type]  # narrowed above
    return [items]  # type: ignore[list-item]  # (concept_id, text) pairs


def mention_pairs(mentions: Iterable[Mention]) -> list[tuple[str, tuple[str, ...]]]:
    """``(text, gold_ids)`` per mention, composite mentions with parts split (see module)."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for m in mentions:
        split = m.kind is MentionKind.COMPOSITE and len(m.parts) == len(m.gold_ids)
        if split:
            out.extend((part, (gid,)) for part, gid in zip(m.parts, m.gold_ids, strict=True))
        else:
            out.append((m.text, m.gold_ids))
    return out


def read_synonyms(
    path: str | Path, format: MentionFormat | str | None = None
) -> list[tuple[str, tuple[str, ...]]]:
    """The pairs of a synonym or mention file (format detected when ``None``)."""
    return mention_pairs(read_mentions(path, format))


def load_synonyms(
    source: SynonymSource, format: MentionFormat | str | None = None
) -> list[tuple[str, tuple[str, ...]]]:
    """``(text, gold_ids)`` pairs from a file (:func:`read_synonyms`) or from
    ``(concept_id, text)`` pairs."""
    if isinstance(source, str | Path):
        return read_synonyms(source, format)
    return [(text, (concept_id,)) for concept_id, text in source]
