"""Splitting a composite mention's text into the mentions it coordinates.

"breast and ovarian cancer" names two diseases. The triplet/sieve paper (Sung et al. 2020's
rule) scores such a mention as correct only when *every part* is normalized correctly; the
parts come from a text split, which this module does with two coordination patterns:

* shared head (head last): ``A, B and C head`` → ``A head``, ``B head``, ``C head``
  ("brain, breast, and prostate cancer" → "brain cancer", "breast cancer", "prostate cancer");
  the head is the last part without its first word.
* shared prefix (head first): ``prefix A and B`` when the last part is one word
  ("deficiency of C6 and C7" → "deficiency of C6", "deficiency of C7").

Coordinators are ``,``, ``and``, ``or`` and ``and/or``. Text without a coordinator
("cholestatic hepatitis" → MeSH hepatitis + cholestasis, NCBI's ``+`` combinations such as
"HPRT-APRT-deficient") cannot be split and stays one part. It is a heuristic: a dataset that
ships its own parts (BC5CDR's PubTator 7th column, BioSyn's ``|``) overrides it.
"""

from __future__ import annotations

import re
from enum import Enum

__all__ = ["CompositeRule", "split_composite"]

_COORDINATOR = re.compile(r"\s*,?\s+(?:and/or|and|or)\s+|\s*,\s*", re.IGNORECASE)


class CompositeRule(str, Enum):
    """How a composite mention is scored where one figure must cover it (``all_acc@k``)."""

    ANY = "any"  # correct when a top-k concept matches any gold ID
    PARTS = "parts"  # correct when every text part has a top-k concept matching a gold ID


def split_composite(text: str) -> tuple[str, ...]:
    """The coordinated parts of ``text`` (``(text,)`` when it has no coordinator)."""
    text = text.strip()
    parts = [p.strip() for p in _COORDINATOR.split(text) if p.strip()]
    if len(parts) < 2:
        return (text,)
    first, last = parts[0].split(), parts[-1].split()
    if len(last) >= 2:
        head = " ".join(last[1:])
        parts = [f"{p} {head}" for p in parts[:-1]] + [parts[-1]]
    elif len(first) >= 2:
        prefix = " ".join(first[:-1])
        parts = [parts[0]] + [f"{prefix} {p}" for p in parts[1:]]
    return tuple(dict.fromkeys(parts))
