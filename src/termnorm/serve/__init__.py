"""The HTTP service: an app factory (FastAPI) over one index, its encoder and domain synonyms.

``create_app(index, synonyms=..., token=...)`` builds the app without loading anything;
the index and its encoder load once at start-up (in the background: ``/v1/ready`` says
when). Needs the ``serve`` extra (``pip install 'termnorm[serve]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

__all__ = ["ServeSettings", "create_app"]

_WHERE = {"ServeSettings": "settings", "create_app": "app"}

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.serve.app import create_app
    from termnorm.serve.settings import ServeSettings

__getattr__ = lazy_getattr(__name__, _WHERE)
