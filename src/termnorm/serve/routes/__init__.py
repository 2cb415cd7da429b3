"""The service's routes, one module per concern, each an ``APIRouter`` that the app factory
includes (:func:`termnorm.serve.app.create_app`): ``service`` (health, ready, metrics, the
page), ``search`` (``/v1/normalize``, ``/v1/normalize/file``), ``concepts`` (lookup,
synonyms), ``docs`` (``/docs``, ``/redoc``, offline) and ``review`` (a mapping project's
review page, included when the service serves a project). Routes reach the app's state through the dependencies of ``deps``; a module whose
routes carry the service's limits exposes ``router(settings)``, the others ``router``."""

__all__: list[str] = []
