"""What the multi-task candidate generator trains on: the KG's dictionary and mention items.

* :class:`ConceptDictionary`: the KG's concepts (index ``c`` = row of ``kg.concepts``), one
  preferred name each, every distinct (concept, term) text, and which concepts carry a text.
  Gold IDs resolve to concepts through :func:`~termnorm.training.triplet_data.concept_key_map`
  (a concept's own ID or any of its ``alt_ids``).
* :class:`MtcgItem`: one (mention, gold concept) pair. A mention with several gold codes
  (NCBI-disease / BC5CDR composites, IDs joined by ``|`` or ``+``) gives one item per gold
  concept, each carrying the mention's whole gold set (never a negative) and its code count
  (the implication label is ``min(count, 3)``).

The positive text of an item is its gold concept's **preferred name**: the paper's positive is
the code's standard term (one per code), and the negatives of every strategy are concept
names or terms of the same dictionary, so the triplet compares a mention with dictionary
entries only. Exact duplicate items (same text, same gold set) are kept once — NCBI-disease's
training split repeats many mentions, and on a CPU budget an epoch over distinct pairs buys
more epochs (the re-mined negatives of the online strategy need them).
Dropped mentions are counted by reason: unlinkable (no gold ID), empty text, a gold ID the
KG does not know (the whole mention: its code count would be wrong), duplicate.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from termnorm.kg import KnowledgeGraph, id_key
from termnorm.kge.embedders import term_key
from termnorm.training.triplet_data import check_kept, concept_key_map

__all__ = ["ConceptDictionary", "MtcgItem", "MtcgItems", "build_mtcg_items"]

logger = logging.getLogger(__name__)


@dataclass
class ConceptDictionary:
    """The KG as MTCG sees it: concepts with a name, and every term text (module doc)."""

    concept_ids: list[str]
    names: list[str]
    term_texts: list[str]
    term_concepts: np.ndarray  # int64 [T]: concept index of each term text
    keys: dict[str, int]  # id_key(any ID or alt ID) -> concept index
    text_concepts: dict[str, frozenset[int]] = field(repr=False)  # folded text -> concepts

    @classmethod
    def from_kg(cls, kg: KnowledgeGraph) -> ConceptDictionary:
        """The dictionary of ``kg`` (a concept without a preferred-term row uses its name)."""
        concept_ids = [str(c) for c in kg.concepts["concept_id"]]
        index = {cid: i for i, cid in enumerate(concept_ids)}
        names = [str(n) for n in kg.concepts["name"]]
        texts: list[str] = []
        owners: list[int] = []
        seen: set[tuple[int, str]] = set()
        by_text: dict[str, set[int]] = {}
        rows = zip(kg.terms["concept_id"], kg.terms["term"], strict=True)
        for cid, term in [(cid, name) for cid, name in zip(concept_ids, names, strict=True)] + [
            (str(c), str(t)) for c, t in rows
        ]:
            c = index.get(cid)
            text = term.strip()
            if c is None or not text or (c, text) in seen:
                continue
            seen.add((c, text))
            texts.append(text)
            owners.append(c)
            by_text.setdefault(term_key(text), set()).add(c)
        keys = {k: index[cid] for k, cid in concept_key_map(kg).items()}
        return cls(
            concept_ids,
            names,
            texts,
            np.asarray(owners, dtype=np.int64),
            keys,
            {t: frozenset(cs) for t, cs in by_text.items()},
        )

    def __len__(self) -> int:
        return len(self.concept_ids)

    def names_gold(self, text: str, gold: frozenset[int]) -> bool:
        """Whether ``text`` (case and spacing folded) is a term of one of the ``gold``
        concepts — such a text is never a negative, whichever concept it came from."""
        return not gold.isdisjoint(self.text_concepts.get(term_key(text), frozenset()))


@dataclass(frozen=True, slots=True)
class MtcgItem:
    """One (mention, gold concept) pair; ``gold`` is the mention's whole gold set."""

    mention: str
    concept: int
    gold: frozenset[int]
    codes: int  # gold codes of the mention (the implication label is min(codes, 3))


@dataclass
class MtcgItems:
    """The items of a run and what was dropped (see module doc)."""

    items: list[MtcgItem]
    mentions: int  # distinct mentions kept
    dropped: Counter[str]

    def code_counts(self) -> dict[str, int]:
        """Kept mentions by implication class (``codes_1``, ``codes_2``, ``codes_3+``)."""
        seen: dict[tuple[str, frozenset[int]], int] = {}
        for it in self.items:
            seen[(it.mention, it.gold)] = it.codes
        counts = Counter(min(c, 3) for c in seen.values())
        return {"codes_1": counts[1], "codes_2": counts[2], "codes_3+": counts[3]}


def build_mtcg_items(
    dictionary: ConceptDictionary, mentions: Iterable[tuple[str, Sequence[str]]]
) -> MtcgItems:
    """Items of the ``(text, gold_ids)`` training mentions (module doc).

    Raises:
        ValueError: no mention is usable, naming the drop counts.
    """
    items: list[MtcgItem] = []
    dropped: Counter[str] = Counter()
    seen: set[tuple[str, frozenset[int]]] = set()
    for raw, gold_ids in mentions:
        text = raw.strip()
        keys = list(dict.fromkeys(id_key(g) for g in gold_ids if g.strip()))
        keys = [k for k in keys if k not in {"-1", "CUI-LESS", "CUI_LESS", "CUILESS", "NIL"}]
        if not text:
            dropped["empty text"] += 1
            continue
        if not keys:
            dropped["unlinkable"] += 1
            continue
        if any(k not in dictionary.keys for k in keys):
            dropped["gold ID not in KG"] += 1
            continue
        concepts = list(dict.fromkeys(dictionary.keys[k] for k in keys))
        gold = frozenset(concepts)
        if (text, gold) in seen:
            dropped["duplicate"] += 1
            continue
        seen.add((text, gold))
        items.extend(MtcgItem(text, c, gold, len(concepts)) for c in concepts)
    check_kept("--loss mtcg", items, dropped, "pass --mentions FILE with gold IDs of the KG")
    return MtcgItems(items, len(seen), dropped)
