"""HPO's modifiers qualify the finding next to them; its other non-phenotype branches and its
diseases are no findings.

A concept's branch is its semantic types (the KG's type-level ancestors: the children of
HPO's root, and of *Phenotypic abnormality* HP:0000118 below it). With
:attr:`Findings.PHENOTYPES` (the default):

- a concept of :data:`MODIFIER_TYPES` alone (*Clinical modifier* HP:0012823 — severity,
  onset, course, pattern… — and *Frequency* HP:0040279) is no finding: it becomes a
  modifier (``"HP:0012825 Mild"``) of the nearest finding of its sentence with at most
  :data:`MAX_GAP_WORDS` words between them and no ``;`` (the following finding on a tie: "mild
  ataxia", "ataxia, progressive", "the ataxia was progressive"), and is dropped when there is
  none. The finding's span stays its own ("ataxia" of "mild ataxia"): the modifier is an
  attribute with a concept of its own, and gold standards differ on whether a span includes
  it (GSC+ dev: "mild ataxia", but "scoliosis" of "severe scoliosis");
- a concept whose types are all of :data:`NOT_FINDING_TYPES` or modifiers (*Mode of
  inheritance*, *Blood group*, *Past medical history*, *Biospecimen phenotypic feature*)
  is dropped;
- HPO's root *All* (:data:`NOT_FINDING_IDS`), whose name is the word "all" of any text, is
  dropped;
- over an index whose KG comes from the ``hpo`` source alone (its card's ``kg.sources``),
  the diseases its loader adds (OMIM, ORPHA; semantic type
  :data:`~termnorm.kg.hpo.DISEASE_TYPE`) are left out of the search itself
  (:func:`findings_search`): the dictionary finds no disease name and the normalizer never
  picks a disease, as ``--not-type Disease`` does. A ``Disease`` type of any other source
  (a KG merged from HPO and another source included) is a finding.

A concept of any other type (every concept of a KG without these branches) is a finding.
:attr:`Findings.ALL` keeps every concept as a finding, with no modifiers.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING

from termnorm.annotate.annotation import Annotation
from termnorm.kg.hpo import DISEASE_TYPE

if TYPE_CHECKING:
    from termnorm.index import TermIndex
    from termnorm.search.spec import PipelineSpec

__all__ = [
    "MAX_GAP_WORDS",
    "MODIFIER_TYPES",
    "NOT_FINDING_IDS",
    "NOT_FINDING_TYPES",
    "Findings",
    "findings_search",
    "qualify",
]


class Findings(str, Enum):
    """Which concepts an annotation reports as findings (module doc)."""

    PHENOTYPES = "phenotypes"
    ALL = "all"


MODIFIER_TYPES = frozenset({"Clinical modifier", "Frequency"})
"""HPO branches (type names) whose concepts qualify a finding."""

NOT_FINDING_TYPES = frozenset(
    {"Mode of inheritance", "Blood group", "Past medical history", "Biospecimen phenotypic feature"}
)
"""HPO branches (type names) whose concepts are neither findings nor modifiers."""

NOT_FINDING_IDS = frozenset({"HP:0000001"})
"""Concepts that are neither findings nor modifiers: HPO's root *All* (untyped, as every
root; its one name matches the quantifier "all")."""

MAX_GAP_WORDS = 3
"""Most words between a modifier and the finding it qualifies."""

_WORD = re.compile(r"\w+")


def findings_search(search: PipelineSpec, findings: Findings, index: TermIndex) -> PipelineSpec:
    """The search an annotation with ``findings`` runs over ``index``: ``search`` with HPO's
    diseases excluded (:data:`~termnorm.kg.hpo.DISEASE_TYPE` added to ``excluded_types``)
    under :attr:`Findings.PHENOTYPES` when every source of ``index``'s KG is ``hpo`` and it
    has diseases; ``search`` itself otherwise, and when ``search`` names that type already
    (asked for with ``semantic_types``, or excluded)."""
    if findings is not Findings.PHENOTYPES or not _has_hpo_diseases(index):
        return search
    named = {t.casefold() for t in (*search.semantic_types, *search.excluded_types)}
    if DISEASE_TYPE.casefold() in named:
        return search
    return search.replace(excluded_types=(*search.excluded_types, DISEASE_TYPE))


def _has_hpo_diseases(index: TermIndex) -> bool:
    """Whether ``index``'s KG comes from the ``hpo`` source alone and holds its diseases."""
    sources = index.card.get("kg", {}).get("sources") or []
    if not sources or any(s.get("format") != "hpo" for s in sources):
        return False
    return any(DISEASE_TYPE in types for types in index.concepts["semantic_types"])


def qualify(
    text: str,
    annotations: Sequence[Annotation],
    types: Sequence[Sequence[str]],
    sentences: Sequence[tuple[int, int]],
) -> list[Annotation]:
    """The findings among ``annotations`` (sorted by offsets; ``types[i]``: the semantic
    types of ``annotations[i]``'s concept) of ``text`` whose ``sentences`` are given, each
    with the modifiers that qualify it, in text order (module doc for the rules)."""
    findings = [
        i
        for i, t in enumerate(types)
        if _is_finding(t) and annotations[i].concept_id not in NOT_FINDING_IDS
    ]
    attached: dict[int, list[int]] = {i: [] for i in findings}
    for m, kinds in enumerate(types):
        if kinds and set(kinds) <= MODIFIER_TYPES:
            target = _nearest(text, annotations, m, findings, sentences)
            if target is not None:
                attached[target].append(m)
    out = []
    for i in findings:
        found = annotations[i]
        mods = [annotations[m] for m in attached[i]]
        named = tuple(f"{mod.concept_id} {mod.name}" for mod in mods)
        out.append(dataclasses.replace(found, modifiers=named))
    return out


def _is_finding(types: Sequence[str]) -> bool:
    """Whether a concept of these semantic types is a finding (none of them: it is)."""
    return not types or not set(types) <= MODIFIER_TYPES | NOT_FINDING_TYPES


def _nearest(
    text: str,
    annotations: Sequence[Annotation],
    modifier: int,
    findings: Sequence[int],
    sentences: Sequence[tuple[int, int]],
) -> int | None:
    """The finding (index) ``modifier`` qualifies: fewest words between, the later on a tie;
    ``None`` when none of its sentence is close enough."""
    m = annotations[modifier]
    sentence = next(((s, e) for s, e in sentences if s <= m.start < e), (0, len(text)))
    best: tuple[int, int, int] | None = None
    for i in findings:
        f = annotations[i]
        if not (sentence[0] <= f.start < sentence[1]):
            continue
        gap = text[m.end : f.start] if f.start >= m.end else text[f.end : m.start]
        words = len(_WORD.findall(gap))
        if words > MAX_GAP_WORDS or ";" in gap or f.start < m.end < f.end:
            continue
        key = (words, -f.start, i)
        best = key if best is None or key < best else best
    return None if best is None else best[2]
