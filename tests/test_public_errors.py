"""The public names: every user-facing error is a :class:`termnorm.TermnormError` defined in
:mod:`termnorm.errors` and reachable as ``termnorm.<Name>``, ``dir(termnorm)`` lists the lazy
exports, and ``termnorm/__init__.pyi`` (what static checkers read) gives the same names.

``python tests/test_public_errors.py`` rewrites the stub from ``termnorm._LAZY``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import termnorm
from termnorm.errors import MissingExtraError

# Exceptions that never reach a user of the CLI or the Python API: the service turns them
# into HTTP answers (ApiError, BodyTooLarge: 413, QueueFullError: 503) or stops on them
# (UploadCancelled: the client went away).
INTERNAL = {
    "termnorm.serve.batching.QueueFullError",
    "termnorm.serve.errors.ApiError",
    "termnorm.serve.guards.BodyTooLarge",
    "termnorm.serve.uploads.UploadCancelled",
    # the encoder's per-batch stop signal inside a training run; the run catches it and
    # returns interrupted, it never reaches a user
    "termnorm.training.run_control.StopRequested",
}
# Modules that only run inside their own tool (Alembic's environment script).
NOT_IMPORTABLE = {"termnorm.projects.migrations.env"}


def _public_exceptions() -> dict[str, type[BaseException]]:
    """``module.Name`` -> class, for every exception class defined in a termnorm module
    (not starting with ``_``); modules whose optional extra is absent are skipped."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(termnorm.__path__, "termnorm."):
        if info.name in NOT_IMPORTABLE:
            continue
        try:
            module = importlib.import_module(info.name)
        except (MissingExtraError, ModuleNotFoundError) as exc:
            if isinstance(exc, ModuleNotFoundError) and (exc.name or "").startswith("termnorm"):
                raise
            continue
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found[f"{module.__name__}.{name}"] = obj
    return found


def test_spec_error_is_a_termnorm_error_and_still_a_value_error() -> None:
    assert issubclass(termnorm.SpecError, termnorm.TermnormError)
    assert issubclass(termnorm.SpecError, ValueError)
    assert issubclass(termnorm.EmptySpecError, termnorm.EmptyResultError)
    with pytest.raises(termnorm.TermnormError, match="no such field") as raised:
        raise termnorm.SpecError("strategy", "no such field")
    assert raised.value.field == "strategy"


def test_every_public_exception_is_a_termnorm_error_exported_at_the_root() -> None:
    found = _public_exceptions()
    assert not INTERNAL - set(found), "an INTERNAL entry names no exception: update the list"
    assert len(found) > 30  # the walk did reach the package's modules
    wrong = []
    for where, cls in sorted(found.items()):
        if where in INTERNAL:
            continue
        name = where.rpartition(".")[2]
        if not issubclass(cls, termnorm.TermnormError):
            wrong.append(f"{where} is not a TermnormError")
        if cls.__module__ != "termnorm.errors":
            wrong.append(f"{where} is defined outside termnorm/errors.py")
        if getattr(termnorm, name, None) is not cls or name not in termnorm.__all__:
            wrong.append(f"{where} is not exported as termnorm.{name} (termnorm.errors.__all__)")
    assert not wrong, "\n".join(wrong)


def test_every_root_export_resolves() -> None:
    for name in termnorm.__all__:
        assert getattr(termnorm, name) is not None, name
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        termnorm.nothing_here  # noqa: B018


def test_dir_lists_the_lazy_exports() -> None:
    listed = dir(termnorm)
    assert {"normalize", "TermIndex", "SpecError", "TermnormError", "__version__"} <= set(listed)
    assert sorted(termnorm.__all__) == listed


STUB = Path(termnorm.__file__).with_suffix(".pyi")


def render_stub() -> str:
    """The text of ``termnorm/__init__.pyi``: each root name imported from its module, as the
    package resolves it (the errors eagerly, the others lazily from ``termnorm._LAZY``)."""
    imports = [
        (module, f"from termnorm.{module} import {name} as {name}")
        for module, names in termnorm._LAZY.items()
        for name in names.split()
    ]
    imports += [
        ("_version", "from termnorm._version import __version__ as __version__"),
        ("errors", "from termnorm.errors import *  # noqa: F403"),
    ]
    header = [
        "# Written from _LAZY in __init__.py by `python tests/test_public_errors.py`: the root",
        "# names, for static checkers and IDEs (the package imports them on first use).",
    ]
    return "\n".join([*header, *(line for _, line in sorted(imports))]) + "\n"


def test_the_stub_gives_the_root_names() -> None:
    assert STUB.read_text(encoding="utf-8") == render_stub(), (
        "termnorm/__init__.pyi is out of date: run python tests/test_public_errors.py"
    )


def test_root_annotate_is_the_function_after_the_package_is_imported() -> None:
    """``termnorm.annotate`` is :func:`termnorm.api.annotate` although termnorm/annotate/ is a
    package imported with the root (no module subclass makes the package callable)."""
    import termnorm.annotate.pipeline
    from termnorm import api
    from termnorm.annotate import Annotator, pipeline

    assert termnorm.annotate is api.annotate
    assert Annotator is pipeline.Annotator
    assert type(importlib.import_module("termnorm.annotate")) is type(termnorm)


if __name__ == "__main__":
    STUB.write_text(render_stub(), encoding="utf-8")
