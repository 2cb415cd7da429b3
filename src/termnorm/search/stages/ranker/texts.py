"""The text a ranker reads for a candidate: its matched synonym and its name.

A candidate found through a synonym ("heart attack" for *Myocardial Infarction*) is shown
to the ranker as ``"heart attack; Myocardial Infarction"``; one matched at its own name as
the name alone. Training and inference both use :func:`candidate_text`, so the ranker
always reads candidates the same way.
"""

from __future__ import annotations

from termnorm.search.candidate import Candidate, is_name

__all__ = ["SEPARATOR", "candidate_text"]

SEPARATOR = "; "


def candidate_text(candidate: Candidate) -> str:
    """``matched_term; name``, or ``name`` when the candidate matched at its name."""
    matched, name = candidate.matched_term.strip(), candidate.name.strip()
    if not matched or is_name(matched, name):
        return name
    return f"{matched}{SEPARATOR}{name}"
