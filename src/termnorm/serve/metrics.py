"""Prometheus metrics of one app, in their own registry (two apps in a process never clash).

``termnorm_requests_total{method,route,status}``, ``termnorm_request_seconds{route}``
(latency histogram), ``termnorm_batch_texts`` (texts per encoded micro-batch) and
``termnorm_queue_texts`` (texts waiting to be encoded). ``route`` is the route's template
(``/v1/concepts/{concept_id}``, ``/openapi.json``) or a mount's (``/static/{path}``), never
the raw path, ``unmatched`` only when no route took the request (a real 404), and
``method`` a known HTTP method or ``other``, so label values stay few whatever clients send.
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = [
    "CONTENT_TYPE_LATEST",
    "KNOWN_METHODS",
    "UNMATCHED",
    "Metrics",
    "MetricsMiddleware",
    "method_label",
    "route_label",
]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
KNOWN_METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"}
)


UNMATCHED = "unmatched"
"""The ``route`` label of a request no route took."""


def method_label(method: str) -> str:
    """``method`` when it is a standard HTTP method, else ``"other"``."""
    return method if method in KNOWN_METHODS else "other"


def route_label(scope: Any) -> str:
    """The template of the route that took a routed request: the API route's own
    (``scope["route"]``), else the plain route or mount of the app whose endpoint it is
    (``/openapi.json``, ``/static/{path}``); :data:`UNMATCHED` when none did."""
    route = scope.get("route")
    if getattr(route, "path", None):
        return str(route.path)
    endpoint = scope.get("endpoint")
    app = scope.get("app")
    if endpoint is None or app is None:
        return UNMATCHED
    for candidate in getattr(app, "routes", ()):
        if endpoint is getattr(candidate, "endpoint", None) or endpoint is getattr(
            candidate, "app", None
        ):
            return str(getattr(candidate, "path_format", None) or UNMATCHED)
    return UNMATCHED


class Metrics:
    """The collectors of one app and its Prometheus text."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "termnorm_requests",
            "HTTP requests by method, route and status code.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "termnorm_request_seconds",
            "Time to answer a request, by route.",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.batch_texts = Histogram(
            "termnorm_batch_texts",
            "Texts per encoded micro-batch.",
            buckets=_BATCH_BUCKETS,
            registry=self.registry,
        )
        self.queue_texts = Gauge(
            "termnorm_queue_texts", "Texts waiting to be encoded.", registry=self.registry
        )

    def render(self) -> bytes:
        """The Prometheus text exposition of every collector."""
        return generate_latest(self.registry)


class MetricsMiddleware:
    """ASGI middleware counting every HTTP response and timing it, by route template."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = {"code": 500}

        async def send_status(message: Any) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            template = route_label(scope)
            self.metrics.requests.labels(
                method_label(scope["method"]), template, str(status["code"])
            ).inc()
            self.metrics.latency.labels(template).observe(time.perf_counter() - start)
