"""Where termnorm caches built artifacts (default index, evaluation results)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$TERMNORM_CACHE`` if set, else the user cache dir (e.g. ``~/.cache/termnorm``)."""
    env = os.environ.get("TERMNORM_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("termnorm"))
