"""The service's routes, one module per concern, each an ``APIRouter`` the app factory
includes (:func:`termnorm.serve.app.create_app`): ``service`` (health, ready, metrics),
``search`` (``/v1/normalize``), ``files`` (``/v1/normalize/file``), ``concepts``, ``synonyms``
and ``page`` (the web page). Routes get the app's state through the dependencies of
``deps``; a module whose route carries the service's limits exposes ``router(settings)``."""

__all__: list[str] = []
