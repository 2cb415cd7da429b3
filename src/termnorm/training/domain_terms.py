"""Training mentions as extra terms of a KG, for CODER's losses with ``--train-data od``.

The triplet network reads Train:OD as a list of texts (:mod:`termnorm.training.triplet_data`);
CODER's sampler draws terms per concept from the KG's ``terms`` table, so for it the annotated
training mentions (a dataset's train split, a hospital's mapped strings) join that table:
each usable mention (one gold concept known to the KG, see
:func:`~termnorm.training.triplet_data.mention_texts`) becomes a term of its concept with
``source = "domain"`` and the language of the concept's first term, unless the concept already
has that text (case-insensitive). Concepts, relations and the KG on disk are untouched; the
returned KG's card records what was added (it reaches the model card).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from termnorm.kg import KnowledgeGraph
from termnorm.training.triplet_data import UNUSABLE, check_kept, concept_key_map, mention_texts

__all__ = ["DOMAIN_SOURCE", "add_domain_terms"]

logger = logging.getLogger(__name__)

DOMAIN_SOURCE = "domain"


def add_domain_terms(
    kg: KnowledgeGraph, mentions: Iterable[tuple[str, Sequence[str]]]
) -> KnowledgeGraph:
    """``kg`` with the new mention texts appended to its terms (see module doc).

    Raises:
        ValueError: when no mention can be used (all composite, unlinkable or unknown to the KG).
    """
    kept, dropped = mention_texts(mentions, concept_key_map(kg))
    check_kept(
        "--train-data od", kept, dropped, UNUSABLE + "; check --mentions and --mentions-format"
    )
    terms = kg.terms
    seen = set(zip(terms["concept_id"], terms["term"].str.lower(), strict=True))
    lang = terms.drop_duplicates("concept_id").set_index("concept_id")["lang"].to_dict()
    rows: list[dict[str, Any]] = []
    for item in kept:
        key = (item.concept_id, item.text.lower())
        if key in seen:
            continue
        seen.add(key)
        rows.append(
            {
                "concept_id": item.concept_id,
                "term": item.text,
                "lang": lang.get(item.concept_id, "en"),
                "source": DOMAIN_SOURCE,
                "is_preferred": False,
            }
        )
    report = {
        "mentions_used": len(kept),
        "terms_added": len(rows),
        "concepts_with_domain_terms": len({r["concept_id"] for r in rows}),
        "mentions_dropped": dict(dropped),
    }
    logger.info("--train-data od: %s", report)
    new_terms = pd.concat([terms, pd.DataFrame(rows, columns=terms.columns)], ignore_index=True)
    card = {**kg.card, "domain_terms": report}
    return KnowledgeGraph(kg.concepts, new_terms.astype(terms.dtypes), kg.relations, card)
