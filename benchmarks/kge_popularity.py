"""The popularity ranker: the link-prediction floor a KGE must beat on a KG.

Each held-out triple (h, r, t) of `termnorm kge train`'s split is ranked on both sides, as the
KGE card does (filtered against train + valid + test, realistic ranks: ties count half), with
no model: a candidate tail of (h, r, ?) scores the number of training triples (·, r, candidate),
a candidate head of (?, r, t) the number of training triples (candidate, r, ·). On a KG where a
few entities take most edges of a relation (HPO's disease → phenotype annotations) this floor
is far above a random ranking, so a KGE's MRR reads against it.

Usage (from the repo root)::

    python benchmarks/kge_popularity.py --kg kg/hpo [--eval-max-triples 500] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np

from termnorm.kg import KnowledgeGraph
from termnorm.kge.split import PARTS, sample_triples, split_triples


def realistic_rank(scores: np.ndarray, target: int, other_true: list[int]) -> float:
    """1-based rank of ``target`` among ``scores`` with the other true answers removed; tied
    candidates count half."""
    kept = scores.astype(float)
    kept[other_true] = -np.inf
    value = kept[target]
    return float((kept > value).sum() + 0.5 * ((kept == value).sum() - 1) + 1)


def popularity_ranks(kg: KnowledgeGraph, max_triples: int | None, seed: int) -> np.ndarray:
    """Head and tail ranks of the (sampled) test triples under the popularity ranker."""
    split = split_triples(kg, 0.04, 0.06, seed)
    train = split.train.mapped_triples.numpy()
    n_entities, n_relations = split.train.num_entities, split.train.num_relations
    degree = np.zeros((n_relations, 2, n_entities))  # [relation, head/tail side, entity]
    np.add.at(degree, (train[:, 1], 0, train[:, 0]), 1)
    np.add.at(degree, (train[:, 1], 1, train[:, 2]), 1)
    tails, heads = defaultdict(list), defaultdict(list)
    for part in PARTS:
        for h, r, t in getattr(split, part).mapped_triples.tolist():
            tails[h, r].append(t)
            heads[r, t].append(h)
    ranks = []
    for h, r, t in sample_triples(split.test, max_triples, seed).mapped_triples.tolist():
        ranks.append(realistic_rank(degree[r, 1], t, [x for x in tails[h, r] if x != t]))
        ranks.append(realistic_rank(degree[r, 0], h, [x for x in heads[r, t] if x != h]))
    return np.asarray(ranks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kg", required=True, help="KG folder (termnorm kg build)")
    parser.add_argument("--eval-max-triples", type=int, default=500, help="0: every test triple")
    parser.add_argument("--seed", type=int, default=0, help="split and sample seed (KGE card's)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    ranks = popularity_ranks(KnowledgeGraph.load(args.kg), args.eval_max_triples or None, args.seed)
    report = {
        "ranked_test_triples": len(ranks) // 2,
        "hits@1": float((ranks <= 1).mean()),
        "hits@3": float((ranks <= 3).mean()),
        "hits@10": float((ranks <= 10).mean()),
        "mr": float(ranks.mean()),
        "mrr": float((1.0 / ranks).mean()),
    }
    print(" ".join(f"{k} {v:.4g}" for k, v in report.items()))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
