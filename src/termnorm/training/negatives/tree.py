"""Tree negatives: siblings and cousins of the gold concept in the KG's hierarchy.

The paper draws negatives from the gold code's category (ICD-9 codes sharing a prefix); in a
KG the category is the neighbourhood through ``is_a`` edges (relations named ``is_a``,
``isa``, ``subclass_of`` or ``parent``, child → parent):

* siblings: the other children of the gold concept's parents;
* cousins: the children of its parents' siblings (concepts sharing a grandparent).

Each epoch draws k_n of them per item (never a gold concept of the mention).
"""

from __future__ import annotations

from collections.abc import Sequence

from termnorm.kg import KnowledgeGraph
from termnorm.training.mtcg_data import ConceptDictionary, MtcgItem

__all__ = ["HIERARCHY_RELATIONS", "tree_pools"]

HIERARCHY_RELATIONS = frozenset({"is_a", "isa", "subclass_of", "parent"})


def tree_pools(
    kg: KnowledgeGraph, dictionary: ConceptDictionary, items: Sequence[MtcgItem]
) -> list[list[str]]:
    """Per item, the names of its gold concept's siblings, then cousins (module doc).

    Raises:
        ValueError: the KG has no hierarchy edges (e.g. MEDIC read from BioSyn's file).
    """
    rel = kg.relations
    edges = rel[rel["relation"].str.lower().isin(HIERARCHY_RELATIONS)]
    if edges.empty:
        raise ValueError(
            "--negatives tree needs is_a (child -> parent) relations in the KG, and this KG "
            f"has none (relations: {sorted(set(rel['relation']))[:8]}); build the KG from a "
            "source with a hierarchy (OBO, CTD_diseases.tsv, ICD) or choose another --negatives"
        )
    index = {cid: i for i, cid in enumerate(dictionary.concept_ids)}
    parents: dict[int, set[int]] = {}
    children: dict[int, set[int]] = {}
    for head, tail in zip(edges["head"], edges["tail"], strict=True):
        h, t = index.get(str(head)), index.get(str(tail))
        if h is None or t is None or h == t:
            continue
        parents.setdefault(h, set()).add(t)
        children.setdefault(t, set()).add(h)
    pools: list[list[str]] = []
    for it in items:
        ups = parents.get(it.concept, set())
        siblings = {s for p in ups for s in children.get(p, ())}
        grand = {g for p in ups for g in parents.get(p, ())}
        uncles = {u for g in grand for u in children.get(g, ())} - ups
        cousins = {c for u in uncles for c in children.get(u, ())} - siblings
        pool = [
            dictionary.names[c]
            for c in [*sorted(siblings), *sorted(cousins)]
            if c not in it.gold and not dictionary.names_gold(dictionary.names[c], it.gold)
        ]
        pools.append(list(dict.fromkeys(pool)))
    return pools
