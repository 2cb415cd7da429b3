"""The service's settings: one dataclass, whose field docs the ``serve`` command reuses."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from termnorm.search.spec import PipelineSpec

__all__ = [
    "DEFAULT_MAX_ANNOTATE_CHARS",
    "DEFAULT_MAX_DOCUMENTS",
    "DEFAULT_MAX_DOCUMENT_CHARS",
    "DEFAULT_MAX_UPLOAD_BYTES",
    "DEFAULT_MAX_UPLOAD_COLUMNS",
    "DEFAULT_MAX_UPLOAD_ROWS",
    "OVERRIDABLE",
    "ServeSettings",
]

DEFAULT_MAX_UPLOAD_BYTES = 10 << 20  # 10 MiB: ~200k short rows, minutes of CPU encoding
DEFAULT_MAX_UPLOAD_ROWS = 100_000  # a few minutes of encoding on one CPU core
DEFAULT_MAX_UPLOAD_COLUMNS = 1_000  # sheets are far narrower; 20k columns is an attack
DEFAULT_MAX_DOCUMENTS = 16  # documents per POST /v1/annotate
DEFAULT_MAX_DOCUMENT_CHARS = 100_000  # a long article; an abstract is ~1,500
DEFAULT_MAX_ANNOTATE_CHARS = 200_000  # characters per annotate request: seconds of CPU
OVERRIDABLE = ("strategy", "min_score", "namespaces", "semantic_types", "multi")
"""The spec fields a request may set (``POST /v1/normalize``'s, of the same names); the rest
(the index, model, runtime, learned stages) is the service's, whatever a request says."""
_JSON_BODY_SLACK = 64 << 10  # bytes of a JSON body beside its texts
_JSON_BYTES_PER_CHAR = 12  # a non-BMP character written as two \uXXXX escapes
_JSON_BYTES_PER_ITEM = 1 << 10  # an item's other fields (a concept ID, quotes, commas)


@dataclass(frozen=True)
class ServeSettings:
    """How the service loads, limits and batches.

    ``spec``: the pipeline spec every request's search starts from (``termnorm.search.spec``:
    the index, its model and runtime, the strategy, filters and learned stages; its
    ``synonyms`` are read-only synonym files, as ``termnorm normalize --synonyms``, added at
    start-up before the store's); a request replaces only :data:`OVERRIDABLE` of it.
    ``synonyms``: a JSONL file of domain synonyms (``{"concept_id": ..., "text": ...}`` per
    line), loaded at start-up when it exists; synonyms added through the API are appended.
    ``token``: the bearer token that ``POST /v1/synonyms`` requires (``None``: adding is off).
    ``max_batch``: most texts (or synonym pairs) per request (more: 413).
    ``max_k``: largest ``k`` (the longest text, longer: 422, is the spec's ``max_chars``).
    ``batch_texts`` / ``batch_wait_ms``: a micro-batch is encoded when it holds this many texts
    or its first text has waited this long. ``micro_batching=False`` encodes each request on
    its own. ``queue_texts``: most texts waiting to be encoded (more: 503 with Retry-After).
    ``max_upload_bytes``: largest request body of a file upload (``POST /v1/normalize/file``;
    larger: 413). ``max_upload_rows`` / ``max_upload_columns``: most data rows and columns of
    an upload (more: 413, before any encoding).
    ``max_documents``: most documents per ``POST /v1/annotate`` (more: 422);
    ``max_document_chars``: longest document (longer: that document's own error, the others
    are annotated); ``max_annotate_chars``: most characters of all a request's documents
    together (more: 413, before any work).
    ``host``: the address the server listens on; ``allow_hosts``: more names the ``Host``
    header may carry (besides IP literals, ``localhost`` and ``host``; ``"*"``: any), which
    defeats DNS rebinding; ``allow_origins``: web origins (``https://app.example``; ``"*"``:
    any) allowed to POST from a browser besides the service's own page.
    ``project``: a mapping project whose review page (``/review``, serve/routes/review.py) the
    service serves, from the database ``project_db`` (``None``: ``PROJECT.termnorm.db``);
    a row opened for review stays leased to its reviewer ``lease_minutes``.
    """

    spec: PipelineSpec = field(default_factory=PipelineSpec)
    synonyms: Path | None = None
    token: str | None = None
    max_batch: int = 64
    max_k: int = 100
    batch_texts: int = 64
    batch_wait_ms: float = 5.0
    micro_batching: bool = True
    queue_texts: int = 1024
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    max_upload_rows: int = DEFAULT_MAX_UPLOAD_ROWS
    max_upload_columns: int = DEFAULT_MAX_UPLOAD_COLUMNS
    max_documents: int = DEFAULT_MAX_DOCUMENTS
    max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS
    max_annotate_chars: int = DEFAULT_MAX_ANNOTATE_CHARS
    host: str = "127.0.0.1"
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    project: str | None = None
    project_db: str | None = None
    lease_minutes: float = 10.0

    def __post_init__(self) -> None:
        for name in ("allow_hosts", "allow_origins"):  # a list given is kept as a tuple
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in (
            "max_batch",
            "max_k",
            "batch_texts",
            "queue_texts",
            "max_upload_bytes",
            "max_upload_rows",
            "max_upload_columns",
            "max_documents",
            "max_document_chars",
            "max_annotate_chars",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.lease_minutes > 0:
            raise ValueError(f"lease_minutes must be > 0, got {self.lease_minutes}")
        if self.batch_wait_ms < 0:
            raise ValueError(f"batch_wait_ms must be >= 0, got {self.batch_wait_ms}")
        if self.queue_texts < self.max_batch:
            raise ValueError(
                f"queue_texts ({self.queue_texts}) must be >= max_batch ({self.max_batch}), "
                "or a full-size request could never be queued"
            )
        if self.token is not None and not self.token.strip():
            raise ValueError("token is empty: give a non-empty token, or none to disable adding")

    @property
    def max_json_bytes(self) -> int:
        """Largest JSON request body: ``max_batch`` items of ``max_chars`` characters, each
        character escaped at worst, plus room for the other fields (larger: 413)."""
        per_item = self.spec.max_chars * _JSON_BYTES_PER_CHAR + _JSON_BYTES_PER_ITEM
        return _JSON_BODY_SLACK + self.max_batch * per_item

    @property
    def max_annotate_bytes(self) -> int:
        """Largest ``POST /v1/annotate`` body: ``max_annotate_chars`` characters, each
        escaped at worst, plus room for each document's other fields (larger: 413)."""
        chars = self.max_annotate_chars * _JSON_BYTES_PER_CHAR
        return _JSON_BODY_SLACK + chars + self.max_documents * _JSON_BYTES_PER_ITEM
