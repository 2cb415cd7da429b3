"""The service's settings: one dataclass, whose fields ``termnorm serve`` generates its
options from (defaults, help texts and bounds live here only)."""

from __future__ import annotations

# opt() returns a dataclasses.Field, as field() does
# ruff: noqa: RUF009
from dataclasses import dataclass, field
from pathlib import Path

from termnorm.annotate.spec import AnnotateSpec
from termnorm.options import check_bounds, opt
from termnorm.search.spec import PipelineSpec

__all__ = [
    "DEFAULT_MAX_ANNOTATE_CHARS",
    "DEFAULT_MAX_ANNOTATE_K",
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
DEFAULT_MAX_ANNOTATE_K = 20  # candidates per annotation: ~12 answer bytes a character each
OVERRIDABLE = ("strategy", "min_score", "namespaces", "semantic_types", "multi")
"""The spec fields a request may set (``POST /v1/normalize``'s, of the same names); the rest
(the index, model, runtime, learned stages) is the service's, whatever a request says."""
_JSON_BODY_SLACK = 64 << 10  # bytes of a JSON body beside its texts
_JSON_BYTES_PER_CHAR = 12  # a non-BMP character written as two \uXXXX escapes
_JSON_BYTES_PER_ITEM = 1 << 10  # an item's other fields (a concept ID, quotes, commas)


@dataclass(frozen=True)
class ServeSettings:
    """How the service loads, limits and batches: one field per setting, its default, help
    text and bounds in the field (``termnorm serve`` generates its options from them).

    ``spec``: the pipeline spec every request's search starts from (``termnorm.search.spec``:
    the index, its model and runtime, the strategy, filters and learned stages; its
    ``synonyms`` are read-only synonym files, as ``termnorm normalize --synonyms``, added at
    start-up before the store's); a request replaces only :data:`OVERRIDABLE` of it. A
    micro-batch is encoded when it holds ``batch_texts`` texts or its first text has waited
    ``batch_wait_ms``. ``annotate``: the annotate spec every ``POST /v1/annotate`` starts
    from (its detectors, tagger folder, assertion rules and language, windows; its
    ``search`` is ``spec`` and its ``max_document_chars`` this one's, set here); a request
    may choose its ``k``, ``language`` and ``detectors``. ``project``: a mapping project whose review page (``/review``,
    serve/routes/review.py) the service serves, from the database ``project_db``.
    """

    spec: PipelineSpec = field(default_factory=PipelineSpec)
    annotate: AnnotateSpec = field(default_factory=AnnotateSpec)
    synonym_store: Path | None = opt(
        None,
        'JSONL store of domain synonyms ({"concept_id": ..., "text": ...} per line): '
        "loaded at start when it exists, synonyms added through the API appended.",
        "--synonyms-file",
    )
    token: str | None = opt(
        None,
        "Bearer token that POST /v1/synonyms requires (none: adding is disabled).",
        envvar="TERMNORM_TOKEN",
    )
    max_batch: int = opt(64, "Most texts (or synonym pairs) per request; more answer 413.", min=1)
    max_k: int = opt(100, "Largest k a request may ask for; larger answer 422.", min=1)
    batch_texts: int = opt(64, "Texts per micro-batch (one forward pass).", min=1)
    batch_wait_ms: float = opt(5.0, "Longest wait to fill a micro-batch.", min=0.0)
    micro_batching: bool = opt(
        True, "Batch the texts and documents of concurrent requests (off: each on its own)."
    )
    queue_texts: int = opt(1024, "Most texts (or documents) waiting; more answer 503.", min=1)
    max_upload_bytes: int = opt(
        DEFAULT_MAX_UPLOAD_BYTES,
        "Largest body of a file upload (POST /v1/normalize/file); larger answer 413.",
        min=1,
    )
    max_upload_rows: int = opt(
        DEFAULT_MAX_UPLOAD_ROWS,
        "Most data rows of an upload; more answer 413 before any work.",
        min=1,
    )
    max_upload_columns: int = opt(
        DEFAULT_MAX_UPLOAD_COLUMNS,
        "Most columns of an upload; more answer 413 before any work.",
        min=1,
    )
    max_documents: int = opt(
        DEFAULT_MAX_DOCUMENTS, "Most documents per POST /v1/annotate; more answer 422.", min=1
    )
    max_document_chars: int = opt(
        DEFAULT_MAX_DOCUMENT_CHARS,
        "Longest document to annotate; a longer one is refused in its own result.",
        min=1,
    )
    max_annotate_chars: int = opt(
        DEFAULT_MAX_ANNOTATE_CHARS,
        "Most characters of an annotate request's documents together; more answer 413 "
        "before any work.",
        min=1,
    )
    max_annotate_k: int = opt(
        DEFAULT_MAX_ANNOTATE_K,
        "Largest k of POST /v1/annotate (candidates per annotation); larger answer 422.",
        min=1,
    )
    max_annotations: int = opt(
        10_000,
        "Most annotations of one document's annotate result: the rest are cut, the result "
        "saying truncated: true (annotate the text after the last annotation again).",
        min=1,
    )
    annotate_workers: int = opt(
        2,
        "POST /v1/annotate answers built at once, each on a thread (the others wait their "
        "turn): more threads of Python work slow the event loop, /v1/health included.",
        min=1,
    )
    max_answer_mb: float = opt(
        64.0,
        "Largest POST /v1/annotate answer in MiB; a larger one answers 413 (ask a smaller k, "
        "or send fewer or shorter documents).",
        min=0.001,
    )
    host: str = opt("127.0.0.1", "Address to listen on.")
    allow_hosts: tuple[str, ...] = opt(
        (),
        "A name the Host header may carry besides IP addresses, localhost and --host "
        "(repeatable; '*': any). Others answer 421, which defeats DNS rebinding.",
        "--allow-host",
        metavar="NAME",
    )
    allow_origins: tuple[str, ...] = opt(
        (),
        "A web origin (https://app.example) whose pages may POST to the service "
        "(repeatable; '*': any). Other cross-origin POSTs answer 403.",
        "--allow-origin",
        metavar="ORIGIN",
    )
    project: str | None = opt(
        None,
        "A mapping project: serve its review page at /review (reviewers' tokens: "
        "termnorm map reviewer add). Without --index, the project's index and synonyms.",
    )
    project_db: str | None = opt(
        None,
        "The project database (None: PROJECT.termnorm.db).",
        "--db",
        envvar="TERMNORM_PROJECT_DB",
    )
    lease_minutes: float = opt(
        10.0,
        "How long a row opened for review stays reserved for its reviewer (the page renews "
        "it while shown).",
        min=0.1,
    )
    header_timeout_s: float = opt(
        10.0,
        "Seconds a client has to send a request's headers (from connecting, or from the "
        "previous answer); slower: 408 and the connection closed.",
        min=0.01,
    )
    body_timeout_s: float = opt(
        60.0,
        "Seconds a client has to send a request's body once its headers arrived; slower: "
        "408 and the connection closed.",
        min=0.01,
    )
    max_connections: int = opt(
        512,
        "A new request answers 503 once this many connections (its own included) are open "
        "or requests are in flight.",
        min=1,
    )

    def __post_init__(self) -> None:
        for name in ("allow_hosts", "allow_origins"):  # a list given is kept as a tuple
            object.__setattr__(self, name, tuple(getattr(self, name)))
        check_bounds(self, label=str)
        annotate = self.annotate.replace(
            search=self.spec, max_document_chars=self.max_document_chars
        )
        object.__setattr__(self, "annotate", annotate)
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

    @property
    def max_answer_bytes(self) -> int:
        """Largest ``POST /v1/annotate`` answer in bytes (``max_answer_mb``)."""
        return int(self.max_answer_mb * (1 << 20))
