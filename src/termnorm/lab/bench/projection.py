"""t-SNE layouts of term vectors for the report (CODER figures 2 and 3).

* *by concept*: all terms (up to 12 each) of ``concepts`` sampled concepts having at least
  ``min_terms`` distinct terms; a good model draws one tight cluster per concept.
* *by type*: the preferred names of ``per_type`` sampled concepts of each of the ``types``
  largest semantic types (a concept counts under its first type); a good model separates
  the types.

Sampling is seeded; the layout is ``sklearn.manifold.TSNE`` (PCA init, fixed random state).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from termnorm.evaluation.embedding import Embedder, encode_texts
from termnorm.kg import KnowledgeGraph
from termnorm.lab.bench.spec import TsneSpec

__all__ = ["tsne_layout"]

MAX_TERMS_PER_CONCEPT = 12


def _project(vectors: np.ndarray, seed: int) -> np.ndarray:
    from sklearn.manifold import TSNE

    n = len(vectors)
    if n < 3:
        return np.zeros((n, 2))
    perplexity = float(min(30.0, max(2.0, (n - 1) / 3)))
    tsne = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed)
    return np.asarray(tsne.fit_transform(vectors.astype(np.float64)))


def _layout(
    model: Embedder, texts: Sequence[str], labels: Sequence[str], seed: int
) -> dict[str, list[Any]]:
    vectors, mask = encode_texts(model, texts)
    xy = _project(vectors[mask], seed)
    kept = [int(i) for i in np.flatnonzero(mask)]
    return {
        "x": xy[:, 0].round(3).tolist(),
        "y": xy[:, 1].round(3).tolist(),
        "text": [texts[i] for i in kept],
        "label": [labels[i] for i in kept],
    }


def tsne_layout(kg: KnowledgeGraph, model: Embedder, spec: TsneSpec) -> dict[str, Any]:
    """``{"by_concept": {x, y, text, label}, "by_type": {...}}`` (JSON-ready)."""
    rng = np.random.default_rng(spec.seed)
    names = kg.concept_names()
    by_concept = kg.terms_by_concept()
    rich = sorted(
        cid
        for cid, terms in by_concept.items()
        if len({t.casefold() for t in terms}) >= spec.min_terms
    )
    chosen = rng.choice(len(rich), min(spec.concepts, len(rich)), replace=False)
    texts: list[str] = []
    labels: list[str] = []
    for i in sorted(int(j) for j in chosen):
        cid = rich[i]
        distinct = list(dict.fromkeys(by_concept[cid]))[:MAX_TERMS_PER_CONCEPT]
        texts += distinct
        labels += [names.get(cid, cid)] * len(distinct)
    out: dict[str, Any] = {"by_concept": _layout(model, texts, labels, spec.seed)}

    first_type: dict[str, list[str]] = {}
    for cid, types in zip(kg.concepts["concept_id"], kg.concepts["semantic_types"], strict=True):
        if types is not None and len(types):
            first_type.setdefault(str(types[0]), []).append(cid)
    largest = sorted(first_type, key=lambda t: (-len(first_type[t]), t))[: spec.types]
    texts, labels = [], []
    for t in largest:
        members = sorted(first_type[t])
        pick = rng.choice(len(members), min(spec.per_type, len(members)), replace=False)
        texts += [names[members[int(j)]] for j in sorted(pick)]
        labels += [t] * len(pick)
    out["by_type"] = _layout(model, texts, labels, spec.seed)
    return out
