"""Nearest-concept tables for hard-negative batch composition (CODER++-style dynamic sampling).

Every few hundred steps the trainer embeds one name per concept with the current model and
keeps, for each concept, its ``n`` nearest other concepts by cosine. The sampler then fills
batches with clusters of mutually near concepts, so that the MS loss's mined pairs are
informative instead of trivially separated. Reference: Zeng et al., "Automatic Biomedical Term
Clustering by Learning Fine-grained Embeddings with Hierarchical Structure" (CODER++), 2022.
"""

from __future__ import annotations

import numpy as np
import torch

from termnorm.errors import MissingExtraError

__all__ = ["nearest_neighbours", "nearest_texts"]


def nearest_neighbours(vectors: np.ndarray, n: int, block: int = 2048) -> np.ndarray:
    """Indices ``[C, n]`` of each row's ``n`` most cosine-similar other rows, best first.

    Exact search by blocked matrix products (memory O(block · C)); rows are L2-normalised
    here, so any scale works. With fewer than ``n + 1`` rows the table is padded with -1.
    """
    x = torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32))  # [C, d]
    x = torch.nn.functional.normalize(x, dim=-1)
    c = x.shape[0]
    take = min(n + 1, c)
    out = np.full((c, n), -1, dtype=np.int64)
    with torch.inference_mode():
        for start in range(0, c, block):
            q = x[start : start + block]  # [b, d]
            sim = q @ x.T  # [b, C]
            rows = torch.arange(q.shape[0])
            sim[rows, rows + start] = float("-inf")  # never one's own neighbour
            idx = sim.topk(take, dim=1).indices[:, : min(n, c - 1)]  # [b, n']
            out[start : start + q.shape[0], : idx.shape[1]] = idx.numpy()
    return out


def nearest_texts(base: np.ndarray, queries: np.ndarray, n: int) -> np.ndarray:
    """Indices ``[Q, n]`` of the ``n`` rows of ``base`` most cosine-similar to each query,
    best first, from an exact faiss inner-product index (``IndexFlatIP``) of the unit rows of
    ``base`` (the prototype batches' index of all training texts). With fewer than ``n`` base
    rows the table is padded with -1. A query that is itself a base row finds itself first.

    Raises:
        MissingExtraError: faiss is not installed (extra ``faiss``).
    """
    try:
        import faiss
    except ImportError as exc:
        raise MissingExtraError("faiss-cpu", "faiss") from exc

    def unit(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float32)
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        return np.ascontiguousarray(x / np.maximum(norms, 1e-12))

    index = faiss.IndexFlatIP(base.shape[1])
    index.add(unit(base))
    take = min(n, base.shape[0])
    _, found = index.search(unit(queries), take)  # [Q, take]
    out = np.full((queries.shape[0], n), -1, dtype=np.int64)
    out[:, :take] = found
    return out
