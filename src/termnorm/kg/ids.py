"""Concept-ID helpers shared by loaders and evaluators.

``id_key`` maps an ID to the key used when comparing a prediction with a gold label:
the namespace is dropped and the local part upper-cased, so ``MESH:D005955`` (KG),
``D005955`` (NCBI gold) and ``mesh:d005955`` all compare equal. Comparisons are only
ever made within one KG, where local parts from different namespaces do not clash in
practice (MeSH ``D…``/``C…`` vs. OMIM numbers vs. HPO ``HP:``-stripped 7-digit numbers).
"""

from __future__ import annotations


def namespaced(namespace: str, local: str) -> str:
    """``namespaced("MESH", "D003920") == "MESH:D003920"``; an ID that has one keeps it."""
    local = local.strip()
    if ":" in local:
        return local
    return f"{namespace}:{local}"


def id_key(concept_id: str) -> str:
    """Comparison key of an ID: local part (after the last ':'), stripped and upper-cased."""
    return concept_id.rsplit(":", 1)[-1].strip().upper()
