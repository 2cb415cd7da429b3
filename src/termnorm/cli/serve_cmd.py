"""``termnorm serve``: the HTTP service and web page over one index (extra ``serve``)."""

from __future__ import annotations

from pathlib import Path

import typer

from termnorm.cli._options import DB_HELP
from termnorm.search.spec import SPEC_HELP
from termnorm.serve.settings import DEFAULT_MAX_UPLOAD_COLUMNS, DEFAULT_MAX_UPLOAD_ROWS

__all__ = ["register"]

SERVE_HELP = """Serve an index over HTTP: a JSON API (/v1/normalize, /v1/normalize/file,
/v1/concepts/ID, /v1/synonyms), the web page at /, the API docs at /docs and Prometheus metrics at /metrics.

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
"""

#: seconds a stopping server waits for requests in flight (uvicorn's graceful shutdown)
SHUTDOWN_GRACE_S = 10


def register(app: typer.Typer) -> None:
    """Attach ``serve`` to ``app``."""

    @app.command("serve", help=SERVE_HELP)
    def serve(
        index: Path | None = typer.Option(
            None, "--index", help="Index folder (default: the built-in HPO index)."
        ),
        model: Path | None = typer.Option(
            None, "--model", help="The index's model folder, when its card's path is not here."
        ),
        synonyms: Path | None = typer.Option(
            None,
            "--synonyms-file",
            help="JSONL store of domain synonyms: loaded at start, added ones appended.",
        ),
        synonym_files: list[Path] | None = typer.Option(
            None, "--synonyms", help=SPEC_HELP["synonyms"], exists=True
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
        max_chars: int = typer.Option(1000, "--max-chars", min=1, help="Longest text."),
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
        ranker: Path | None = typer.Option(
            None,
            "--ranker",
            exists=True,
            help="Ranker folder (termnorm rank train): reorder each text's top --k-c recalled "
            "candidates by the fused recall + ranker score.",
        ),
        implication: Path | None = typer.Option(
            None,
            "--implication",
            exists=True,
            help='Model folder with an implication head, for "multi" requests when the '
            "index's model has none.",
        ),
        k_c: int = typer.Option(10, "--k-c", min=1, help="Candidates the ranker reorders."),
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

        if project is not None:  # a project not there is an error now, not at start-up
            from termnorm.projects.overview import pipeline_settings

            mapped = pipeline_settings(project, db=project_db)  # its index and synonyms
            if index is None and mapped.index is not None:
                index = Path(mapped.index)
            synonym_files = synonym_files or [Path(p) for p in mapped.synonyms]
        elif project_db is not None:
            raise typer.BadParameter("--db needs --project PROJECT", param_hint="--db")
        if implication is not None and ranker is None:
            raise typer.BadParameter("--implication needs --ranker RANKER", param_hint="--ranker")
        if index is not None and not (index / CARD_NAME).is_file():
            raise typer.BadParameter(
                f"{index} is not an index folder (no {CARD_NAME}); build one with "
                "'termnorm index build'",
                param_hint="--index",
            )
        application = create_app(
            index,
            synonyms,
            token,
            model=model,
            synonym_files=tuple(synonym_files or ()),
            max_batch=max_batch,
            max_chars=max_chars,
            batch_texts=batch_texts,
            batch_wait_ms=batch_wait_ms,
            queue_texts=queue_texts,
            micro_batching=not no_micro_batching,
            max_upload_bytes=int(max_upload_mb * (1 << 20)),
            max_upload_rows=max_upload_rows,
            max_upload_columns=max_upload_columns,
            host=host,
            allow_hosts=tuple(allow_host),
            allow_origins=tuple(allow_origin),
            ranker=ranker,
            implication=implication,
            k_c=k_c,
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
