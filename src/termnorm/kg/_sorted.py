"""Membership of integer IDs in a sorted array: what the block-streamed loaders (OMOP,
SNOMED CT) test each batch against instead of a Python set of millions of IDs."""

from __future__ import annotations

import numpy as np
import pandas as pd


def member(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Which of ``ids`` are in ``sorted_ids`` (sorted, unique): a boolean array like ``ids``."""
    if len(sorted_ids) == 0:
        return np.zeros(len(ids), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return sorted_ids[at] == ids


def nonzero(mask: np.ndarray | pd.Series) -> int:
    """How many rows ``mask`` selects."""
    return int(np.count_nonzero(mask))
