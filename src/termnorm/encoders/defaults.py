"""Encoder defaults that the library, the index build and the CLI share (import-free).

``DEFAULT_MAX_LENGTH``: tokens per term. Terms are short (a UMLS/HPO name is rarely over 16
WordPiece tokens), so termnorm truncates at 32 whatever a model folder allows; an index card
records the length it was built with. A sentence-transformers folder's ``max_seq_length``
(all-MiniLM-L6-v2 declares 256) is an upper bound: when the caller gives no length,
:meth:`termnorm.encoders.TermEncoder.load` takes the smaller of the two.

``DEFAULT_BATCH_SIZE``: texts per forward pass when encoding.
"""

from __future__ import annotations

__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_MAX_LENGTH"]

DEFAULT_MAX_LENGTH = 32
DEFAULT_BATCH_SIZE = 256
