"""A bounded LRU cache of recent query vectors, for single-query latency.

Keys are ``(text, model fingerprint, runtime)``: a vector is reused only for the same text
encoded by the same model weights through the same runtime. At most ``maxsize`` vectors are
kept; the least recently used is dropped first. An encoder uses it only once it is bound to
a runtime for inference (:meth:`termnorm.encoders.TermEncoder.set_runtime`), when its
weights no longer change.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

__all__ = ["DEFAULT_QUERY_CACHE_SIZE", "QueryCache"]

DEFAULT_QUERY_CACHE_SIZE = 1024

Key = tuple[str, str, str]


class QueryCache:
    """``(text, fingerprint, runtime) -> float32 vector``, least recently used evicted."""

    def __init__(self, maxsize: int = DEFAULT_QUERY_CACHE_SIZE) -> None:
        if maxsize < 1:
            raise ValueError(f"a query cache holds at least one vector, not {maxsize}")
        self.maxsize = maxsize
        self._items: OrderedDict[Key, np.ndarray] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Key) -> np.ndarray | None:
        """The cached vector (marked recently used), or ``None``."""
        vector = self._items.get(key)
        if vector is not None:
            self._items.move_to_end(key)
        return vector

    def put(self, key: Key, vector: np.ndarray) -> None:
        """Store a read-only copy of ``vector``; evict the least recently used beyond ``maxsize``."""
        stored = np.array(vector, dtype=np.float32, copy=True)
        stored.flags.writeable = False
        self._items[key] = stored
        self._items.move_to_end(key)
        while len(self._items) > self.maxsize:
            self._items.popitem(last=False)
