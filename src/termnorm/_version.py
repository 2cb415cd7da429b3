"""termnorm's version, at the ground floor so that any room can stamp it on an artifact
without importing the package root (keep it equal to ``version`` in pyproject.toml)."""

__version__ = "0.1.0"
