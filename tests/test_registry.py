"""The one registry shape: register by call or decorator, resolve, unknown names listed,
lazy import paths, entry-point plugins."""

from __future__ import annotations

import dataclasses
import enum
from importlib.metadata import EntryPoint

import pytest

from termnorm import registry as registry_module
from termnorm.errors import UnknownNameError
from termnorm.options import opt
from termnorm.registry import Entry, Registry, import_path


@dataclasses.dataclass(frozen=True)
class DummyOptions:
    width: int = opt(3, "how wide")


def test_register_resolve_and_order() -> None:
    reg: Registry[object] = Registry("KG format", "--format")
    reg.register("obo", "termnorm.kg.obo:load_obo", options=DummyOptions, help="OBO files")

    @reg.register("tsv", help="a TSV")
    def load_tsv() -> str:
        return "tsv"

    assert reg.names() == ["obo", "tsv"]
    assert "tsv" in reg and "nope" not in reg and len(reg) == 2
    assert reg.resolve("tsv").load()() == "tsv"  # type: ignore[operator]
    assert reg.resolve("obo").options is DummyOptions
    assert load_tsv() == "tsv"  # the decorator returns what it decorates
    reg.unregister("tsv")
    assert reg.names() == ["obo"]


def test_unknown_name_lists_the_known_ones_and_the_closest() -> None:
    reg: Registry[object] = Registry("detector", "--detectors")
    reg.register("dictionary", object())
    reg.register("tagger", object())
    with pytest.raises(UnknownNameError) as caught:
        reg.resolve("dictionry")
    message = str(caught.value)
    assert "unknown detector 'dictionry' (--detectors)" in message
    assert "did you mean 'dictionary'?" in message
    assert "Known: dictionary, tagger" in message
    assert isinstance(caught.value, ValueError)


def test_an_entry_added_before_another_takes_its_place_in_the_order() -> None:
    reg: Registry[object] = Registry("stage")
    for name in ("hybrid", "combiner", "ranker"):
        reg.register(name, object())
    reg.add(Entry("dummy", object()), before="ranker")
    assert reg.names() == ["hybrid", "combiner", "dummy", "ranker"]
    with pytest.raises(UnknownNameError, match="Known: hybrid, combiner, dummy, ranker"):
        reg.add(Entry("late", object()), before="rankr")
    assert "late" not in reg


def test_names_that_are_str_enum_members_are_written_as_their_values() -> None:
    class Kind(enum.StrEnum):
        TRIPLET = "triplet"

    reg: Registry[object] = Registry("objective", "--loss")
    reg.register(Kind.TRIPLET, object())
    assert reg.resolve("triplet").name is Kind.TRIPLET
    with pytest.raises(UnknownNameError, match=r"did you mean 'triplet'\? Known: triplet$"):
        reg.resolve("tripet")


def test_a_taken_name_and_options_that_are_not_a_dataclass_are_refused() -> None:
    reg: Registry[object] = Registry("export")
    reg.register("sssom", object())
    with pytest.raises(ValueError, match="already registered"):
        reg.register("sssom", object())
    with pytest.raises(ValueError, match="must be a dataclass"):
        reg.register("omop", object(), options=dict)


def test_import_path_is_lazy_and_checked() -> None:
    entry: Entry[object] = Entry("opt", "termnorm.options:opt")
    assert entry.load() is opt
    assert import_path("termnorm.options:opt") is opt
    with pytest.raises(ValueError, match=r"package\.module:attribute"):
        import_path("termnorm.options.opt")


def test_entry_points_extend_a_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = Entry("plugin", object(), help="from a package")
    points = [EntryPoint("plugin", "termnorm.registry:TEST_PLUGIN", "termnorm.test_kind")]
    monkeypatch.setattr(registry_module, "entry_points", lambda group: points)
    monkeypatch.setattr(registry_module, "TEST_PLUGIN", plugin, raising=False)
    reg: Registry[object] = Registry("test kind", group="termnorm.test_kind")
    reg.register("builtin", object())
    assert reg.names() == ["builtin", "plugin"]
    assert reg.resolve("plugin") is plugin


def test_an_entry_point_that_is_not_an_entry_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    points = [EntryPoint("bad", "termnorm.options:opt", "termnorm.test_kind")]
    monkeypatch.setattr(registry_module, "entry_points", lambda group: points)
    reg: Registry[object] = Registry("test kind", group="termnorm.test_kind")
    with pytest.raises(TypeError, match=r"must be a termnorm\.registry\.Entry"):
        reg.names()
