"""``termnorm serve``: the HTTP service and web page over one index (extra ``serve``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from termnorm.cli._options import DB_HELP
from termnorm.cli._strategy import spec_from_options, with_spec_options
from termnorm.serve.settings import (
    DEFAULT_MAX_ANNOTATE_CHARS,
    DEFAULT_MAX_DOCUMENT_CHARS,
    DEFAULT_MAX_DOCUMENTS,
    DEFAULT_MAX_UPLOAD_COLUMNS,
    DEFAULT_MAX_UPLOAD_ROWS,
)

__all__ = ["register"]

SERVE_HELP = """Serve an index over HTTP: a JSON API (/v1/normalize, /v1/normalize/file,
/v1/annotate, /v1/concepts/ID, /v1/synonyms), the web page at /, the API docs at /docs and Prometheus metrics at /metrics.

The index and its model load once, in the background: /v1/ready answers 503 until they are
loaded. Texts of concurrent requests are encoded together (micro-batching); when the queue
is full the service answers 503 with Retry-After.

Examples:

  termnorm serve --index idx/medic

  termnorm serve --index idx/medic --synonyms-file synonyms.jsonl --token "$TOKEN"

  termnorm serve --index idx/medic --synonyms NCBItrainset_corpus.txt --synonyms NCBIdevelopset_corpus.txt

  termnorm serve --project labs     (the review page at /review, over the project's index)

  curl -s localhost:8000/v1/normalize -H 'Content-Type: application/json' \\
       -d '{"texts": ["heart attack"], "k": 3}'

  curl -s localhost:8000/v1/annotate -H 'Content-Type: application/json' \\
       -d '{"documents": [{"id": "1", "text": "Patient denies chest pain."}]}'
"""

_SPEC_HELP = {
    "index": "Index folder (default: the built-in HPO index; with --project, the project's).",
    "synonyms": "Read-only domain synonym files added at start (a concept_id<TAB>text file or "
    "an annotated mention file); repeatable. With --project, the project's by default.",
    "strategy": "The search strategy of a request that names none (o-t, d-t+od-t, ...; "
    "default: d-t+od-t once the service has domain synonyms, else o-t).",
    "min_score": "Abstain below this score unless a request gives its own min_score.",
}
"""The spec options whose meaning the service extends (the project's defaults; a request's
own strategy and min_score)."""

#: seconds a stopping server waits for requests in flight (uvicorn's graceful shutdown)
SHUTDOWN_GRACE_S = 10


def register(app: typer.Typer) -> None:
    """Attach ``serve`` to ``app``."""

    @app.command("serve", help=SERVE_HELP)
    @with_spec_options(help=_SPEC_HELP)
    def serve(
        synonym_store: Path | None = typer.Option(
            None,
            "--synonyms-file",
            help="JSONL store of domain synonyms: loaded at start, added ones appended.",
        ),
        token: str | None = typer.Option(
            None,
            "--token",
            envvar="TERMNORM_TOKEN",
            help="Bearer token that POST /v1/synonyms requires (none: adding is disabled).",
        ),
        host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
        port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to listen on."),
        max_batch: int = typer.Option(64, "--max-batch", min=1, help="Most texts per request."),
        batch_texts: int = typer.Option(
            64, "--batch-texts", min=1, help="Texts per micro-batch (one forward pass)."
        ),
        batch_wait_ms: float = typer.Option(
            5.0, "--batch-wait-ms", min=0.0, help="Longest wait to fill a micro-batch."
        ),
        queue_texts: int = typer.Option(
            1024, "--queue-texts", min=1, help="Most texts waiting; more answer 503."
        ),
        max_upload_mb: float = typer.Option(
            10.0, "--max-upload-mb", min=0.001, help="Largest CSV/TSV upload; larger answer 413."
        ),
        max_upload_rows: int = typer.Option(
            DEFAULT_MAX_UPLOAD_ROWS,
            "--max-upload-rows",
            min=1,
            help="Most data rows of an upload; more answer 413 before any work.",
        ),
        max_upload_columns: int = typer.Option(
            DEFAULT_MAX_UPLOAD_COLUMNS,
            "--max-upload-columns",
            min=1,
            help="Most columns of an upload; more answer 413 before any work.",
        ),
        max_documents: int = typer.Option(
            DEFAULT_MAX_DOCUMENTS,
            "--max-documents",
            min=1,
            help="Most documents per POST /v1/annotate; more answer 422.",
        ),
        max_document_chars: int = typer.Option(
            DEFAULT_MAX_DOCUMENT_CHARS,
            "--max-document-chars",
            min=1,
            help="Longest document to annotate; a longer one is refused in its own result.",
        ),
        max_annotate_chars: int = typer.Option(
            DEFAULT_MAX_ANNOTATE_CHARS,
            "--max-annotate-chars",
            min=1,
            help="Most characters of an annotate request's documents together; more answer "
            "413 before any work.",
        ),
        allow_host: list[str] = typer.Option(
            [],
            "--allow-host",
            metavar="NAME",
            help="A name the Host header may carry besides IP addresses, localhost and --host "
            "(repeatable; '*': any). Others answer 421, which defeats DNS rebinding.",
        ),
        allow_origin: list[str] = typer.Option(
            [],
            "--allow-origin",
            metavar="ORIGIN",
            help="A web origin (https://app.example) whose pages may POST to the service "
            "(repeatable; '*': any). Other cross-origin POSTs answer 403.",
        ),
        no_micro_batching: bool = typer.Option(
            False, "--no-micro-batching", help="Encode each request on its own."
        ),
        project: str | None = typer.Option(
            None,
            "--project",
            help="A mapping project: serve its review page at /review (reviewers' tokens: "
            "termnorm map reviewer add). Without --index, the project's index and synonyms.",
        ),
        project_db: str | None = typer.Option(
            None, "--db", envvar="TERMNORM_PROJECT_DB", help="With --project: " + DB_HELP
        ),
        lease_minutes: float = typer.Option(
            10.0,
            "--lease-minutes",
            min=0.1,
            help="How long a row opened for review stays "
            "reserved for its reviewer (the page renews it while shown).",
        ),
        **options: Any,
    ) -> None:
        from termnorm.errors import MissingExtraError

        try:
            import uvicorn
        except ImportError:
            raise MissingExtraError("uvicorn", "serve") from None
        from termnorm.index.term_index import CARD_NAME
        from termnorm.serve import create_app
        from termnorm.serve.guards import normalize_origin

        for origin in allow_origin:
            try:
                normalize_origin(origin)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--allow-origin") from None

        spec = spec_from_options(options)
        if project is not None:  # a project not there is an error now, not at start-up
            from termnorm.projects.overview import pipeline_settings

            mapped = pipeline_settings(project, db=project_db)  # its index and synonyms
            spec = spec.replace(
                index=spec.index or mapped.index, synonyms=spec.synonyms or mapped.synonyms
            )
        elif project_db is not None:
            raise typer.BadParameter("--db needs --project PROJECT", param_hint="--db")
        if spec.index is not None and not (spec.index / CARD_NAME).is_file():
            raise typer.BadParameter(
                f"{spec.index} is not an index folder (no {CARD_NAME}); build one with "
                "'termnorm index build'",
                param_hint="--index",
            )
        application = create_app(
            synonyms=synonym_store,
            token=token,
            spec=spec,
            max_batch=max_batch,
            batch_texts=batch_texts,
            batch_wait_ms=batch_wait_ms,
            queue_texts=queue_texts,
            micro_batching=not no_micro_batching,
            max_upload_bytes=int(max_upload_mb * (1 << 20)),
            max_upload_rows=max_upload_rows,
            max_upload_columns=max_upload_columns,
            max_documents=max_documents,
            max_document_chars=max_document_chars,
            max_annotate_chars=max_annotate_chars,
            host=host,
            allow_hosts=tuple(allow_host),
            allow_origins=tuple(allow_origin),
            project=project,
            project_db=project_db,
            lease_minutes=lease_minutes,
        )
        # SIGTERM: requests in flight get SHUTDOWN_GRACE_S to finish, then are cancelled
        # (an upload's work stops with its request) rather than holding the stop for hours
        uvicorn.run(
            application,
            host=host,
            port=port,
            log_level="info",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        )
