"""``termnorm serve``: the HTTP service and web page over one index (extra ``serve``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import typer

from termnorm.annotate.spec import AnnotateSpec
from termnorm.cli._options import DB_HELP
from termnorm.cli._strategy import spec_from_options, with_spec_options
from termnorm.serve.settings import DEFAULT_MAX_UPLOAD_BYTES, ServeSettings

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
    "project_db": "With --project: " + DB_HELP,
}
"""The spec options whose meaning the service extends (the project's defaults; a request's
own strategy and min_score), and the project database's full help."""
_NOT_OPTIONS = ("spec", "max_upload_bytes", "search", "k")
"""The settings that are no option of their own: the spec is the spec options, the upload
limit is ``--max-upload-mb``, the annotate spec's search is the spec and its ``k`` a
request's."""
_SETTINGS = frozenset(f.name for f in dataclasses.fields(ServeSettings)) - {"spec", "annotate"}
_ANNOTATE = frozenset(f.name for f in dataclasses.fields(AnnotateSpec)) - {
    *_NOT_OPTIONS,
    *_SETTINGS,
}

#: seconds a stopping server waits for requests in flight (uvicorn's graceful shutdown)
SHUTDOWN_GRACE_S = 10


def register(app: typer.Typer) -> None:
    """Attach ``serve`` to ``app``."""

    @app.command("serve", help=SERVE_HELP)
    @with_spec_options(help=_SPEC_HELP, settings=[ServeSettings], exclude=_NOT_OPTIONS)
    def serve(
        port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to listen on."),
        max_upload_mb: float = typer.Option(
            DEFAULT_MAX_UPLOAD_BYTES / (1 << 20),
            "--max-upload-mb",
            min=0.001,
            help="Largest CSV/TSV upload in MiB; larger answer 413.",
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
        from termnorm.serve.server import server_options

        given = {name: options.pop(name) for name in _SETTINGS if name in options}
        annotate = {name: options.pop(name) for name in _ANNOTATE if name in options}
        for origin in given["allow_origins"]:
            try:
                normalize_origin(origin)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--allow-origin") from None

        spec = spec_from_options(options)
        try:
            annotate_spec = AnnotateSpec(**annotate)
        except ValueError as exc:  # an unknown detector (the known listed), --ner missing
            raise typer.BadParameter(str(exc)) from None
        project, project_db = given["project"], given["project_db"]
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
            synonyms=given.pop("synonym_store"),
            token=given.pop("token"),
            spec=spec,
            annotate=annotate_spec,
            max_upload_bytes=int(max_upload_mb * (1 << 20)),
            **given,
        )
        # SIGTERM: requests in flight get SHUTDOWN_GRACE_S to finish, then are cancelled
        # (an upload's work stops with its request) rather than holding the stop for hours
        uvicorn.run(
            application,
            **server_options(application.state.settings),  # address, timeouts, connections
            port=port,
            log_level="info",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        )
