"""Keyword-replacement negatives: the gold name with one site or type keyword swapped.

The paper replaces a procedure *site* ("甲状腺", thyroid) or *type* ("切除", excision) keyword of
the gold terminology by another keyword of the same kind, giving near-miss texts that are no
KG entry ("肾上腺病损切除术", "甲状腺病损检查术"). Here the keywords are plain word sets
(``sites``, ``types``); a keyword matches case-insensitively, on word boundaries when it is
written in a script with spaces, anywhere for CJK keywords; the longest keyword wins where
matches overlap. Each keyword occurrence is swapped, one at a time, with each other keyword
of its kind; a swap that is a term of a gold concept is dropped. An item keeps at most
``limit`` swaps (a seeded sample) and draws k_n of them per epoch; an item whose gold name
has no keyword is completed with random wrong concepts (counted on the model card).

:func:`read_keyword_sets` reads the vocabulary file ``termnorm.kg.keywords`` writes (TSV with
header ``keyword<TAB>kind``, kind ``site`` or ``type``, ``#`` comments).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from termnorm.errors import InputFormatError
from termnorm.training.mtcg_data import ConceptDictionary, MtcgItem

__all__ = [
    "keyword_pools",
    "keyword_replacements",
    "keyword_spans",
    "read_keyword_sets",
]

_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def read_keyword_sets(path: str | Path) -> tuple[frozenset[str], frozenset[str]]:
    """``(sites, types)`` of a keyword vocabulary file (module doc).

    Raises:
        InputFormatError: a missing header, a row without two fields or an unknown kind.
    """
    path = Path(path)
    sites: set[str] = set()
    types: set[str] = set()
    header_seen = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if not header_seen:
            if fields[:2] != ["keyword", "kind"]:
                raise InputFormatError(path, number, "expected the header 'keyword<TAB>kind'")
            header_seen = True
            continue
        if len(fields) < 2 or not fields[0]:
            raise InputFormatError(path, number, "expected 'keyword<TAB>kind'")
        if fields[1] == "site":
            sites.add(fields[0])
        elif fields[1] == "type":
            types.add(fields[0])
        else:
            raise InputFormatError(path, number, f"kind {fields[1]!r} is not 'site' or 'type'")
    if not sites and not types:
        raise InputFormatError(path, None, "no keyword rows")
    return frozenset(sites), frozenset(types)


def _pattern(keyword: str) -> str:
    escaped = re.escape(keyword)
    return escaped if _CJK.search(keyword) else rf"(?<!\w){escaped}(?!\w)"


def keyword_spans(
    text: str, sites: Collection[str], types: Collection[str]
) -> list[tuple[int, int, str]]:
    """Non-overlapping ``(start, end, kind)`` keyword matches in ``text``, longest first."""
    found: list[tuple[int, int, str]] = []
    for kind, words in (("site", sites), ("type", types)):
        for word in words:
            for m in re.finditer(_pattern(word), text, flags=re.IGNORECASE):
                found.append((m.start(), m.end(), kind))
    found.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    kept: list[tuple[int, int, str]] = []
    for start, end, kind in found:
        if all(end <= a or start >= b for a, b, _ in kept):
            kept.append((start, end, kind))
    return sorted(kept)


def keyword_replacements(text: str, sites: Collection[str], types: Collection[str]) -> list[str]:
    """Every text obtained by swapping one keyword of ``text`` for another of its kind."""
    by_kind = {"site": sorted(sites), "type": sorted(types)}
    out: list[str] = []
    for start, end, kind in keyword_spans(text, sites, types):
        current = text[start:end].casefold()
        for other in by_kind[kind]:
            if other.casefold() != current:
                out.append(text[:start] + other + text[end:])
    return list(dict.fromkeys(out))


def keyword_pools(
    dictionary: ConceptDictionary,
    items: Sequence[MtcgItem],
    sites: Collection[str],
    types: Collection[str],
    limit: int = 64,
    seed: int = 0,
) -> list[list[str]]:
    """Per item, at most ``limit`` keyword swaps of its gold name (never a gold term)."""
    pools: list[list[str]] = []
    for i, it in enumerate(items):
        swaps = [
            s
            for s in keyword_replacements(dictionary.names[it.concept], sites, types)
            if not dictionary.names_gold(s, it.gold)
        ]
        if len(swaps) > limit:
            pick = np.random.default_rng([seed, i]).choice(len(swaps), limit, replace=False)
            swaps = [swaps[int(j)] for j in sorted(pick)]
        pools.append(swaps)
    return pools
