"""Every example a user copies runs as shown.

* Every ``termnorm …`` command in the README and every ``docs/`` page (code blocks and table
  cells) and in every ``--help`` epilog parses against the real command tree: the command exists, each option is
  the command's, an enum option names an allowed value, no argument is missing or extra.
* The Python API block (``docs/normalize.md``) runs for real (real MiniLM) against a MEDIC subset at
  ``idx/medic`` and an HPO subset as the default index, and every call that returns results
  returns some: ``termnorm.normalize("fits", k=3, min_score=0.8, ...)`` once returned ``[]``.
  A subset can only lose candidates, never add any, so a non-empty answer here is non-empty
  on the whole terminology too.
* The pages' other Python blocks (training, rankers: minutes of work) compile, and every
  name they import or reach through ``termnorm.`` exists.
"""

from __future__ import annotations

import ast
import importlib
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _doc_examples import (
    README,
    Example,
    command_tree,
    doc_examples,
    help_examples,
    page_examples,
    pages,
    problem,
)
from conftest import require_benchmarks

PY_BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```", re.S | re.M)
"""A Python block, at the margin or indented in a list item (the spaCy one)."""
SPACY_PIPE = 'nlp.add_pipe("termnorm"'
"""How the spaCy block (``docs/annotate.md``) adds termnorm's component."""


@pytest.fixture(scope="module")
def root() -> Any:
    return command_tree()


def test_every_page_and_help_example_parses(root: Any) -> None:
    docs, helps = doc_examples(), help_examples(root)
    assert len(docs) > 60 and len(helps) > 20  # the extractor still finds them
    problems = [f"{e}: {p}" for e in [*docs, *helps] if (p := problem(root, e)) is not None]
    assert problems == []


def test_every_page_is_read() -> None:
    """The README's guide and each ``docs/`` page the commands moved to are parsed, each
    command named by its own page and line."""
    read = {path.relative_to(README.parent).as_posix() for path in pages()}
    assert {"README.md", "docs/kg.md", "docs/normalize.md", "docs/results/runtimes.md"} <= read
    kg = page_examples(README.parent / "docs" / "kg.md")
    assert kg[0].where == "docs/kg.md:4"
    assert kg[0].argv == ("kg", "build", "--format", "hpo", "--out", "kg/hpo")
    assert len(page_examples(README)) >= 10  # one example per job, and the other languages'


def test_a_broken_command_in_a_docs_page_is_named(root: Any, tmp_path: Path) -> None:
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("# A page\n\n```bash\ntermnorm nomalize MI\n```\n", encoding="utf-8")
    example = page_examples(page, root=tmp_path)[0]
    assert example.where == "docs/page.md:4"
    assert "no command 'nomalize'" in (problem(root, example) or "")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("normalize", "MI", "--no-such-option"), "No such option: --no-such-option"),
        (("normalize", "MI", "--runtime", "fast"), "--runtime 'fast': not one of"),
        (("nomalize", "MI"), "no command 'nomalize'"),
        (("lookup",), "missing argument"),
        (("map", "run", "labs", "[--address", "X]"), "unexpected extra arguments"),
        (("index", "build", "--out"), "requires an argument"),
    ],
)
def test_the_checker_names_what_would_not_run(
    root: Any, argv: tuple[str, ...], message: str
) -> None:
    assert message in (problem(root, Example("test", argv)) or "")


def test_continued_help_examples_are_read_whole(root: Any) -> None:
    select = [e for e in help_examples(root) if e.argv[:2] == ("eval", "select")]
    assert select[0].argv[-2:] == ("--setting", "a0.6=a06_s13.jsonl,a06_s7.jsonl")


# ---------------------------------------------------------------- the Python blocks
def python_blocks() -> list[str]:
    """The Python blocks of the README and the ``docs/`` pages, each dedented to the margin."""
    found = [m for path in pages() for m in PY_BLOCK.findall(path.read_text(encoding="utf-8"))]
    return [textwrap.dedent(code) for _indent, code in found]


def api_block() -> str:
    return next(b for b in python_blocks() if 'termnorm.normalize("heart attack")' in b)


def _names_used(tree: ast.AST) -> Iterator[tuple[str, str]]:
    """(module, name) of each ``from M import N`` and each ``termnorm.a.b`` chain's head."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield from ((node.module, alias.name) for alias in node.names)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "termnorm"
        ):
            yield "termnorm", node.attr


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_every_python_block_compiles_and_its_names_exist(index: int) -> None:
    block = python_blocks()[index]
    tree = ast.parse(block)
    used = list(_names_used(tree))
    # the spaCy block reaches termnorm by its component's name only
    assert used or SPACY_PIPE in block, "a Python block that uses nothing from termnorm"
    for module, name in used:
        if module.split(".")[0] not in {"termnorm", "sentence_transformers"}:
            continue
        assert hasattr(importlib.import_module(module), name), f"{module}.{name} does not exist"


MEDIC_IDS = {"D005955", "D049950", "D009203", "D006973", "D003920", "D001249"}


def _medic_subset(medic: Path, out: Path, extra: int = 400) -> Path:
    """The MEDIC lines of the concepts the examples name, plus the first ``extra`` others."""
    lines = medic.read_text(encoding="utf-8").splitlines()
    named = [line for line in lines if MEDIC_IDS & set(line.split("||")[0].split("|"))]
    rest = [line for line in lines[:extra] if line not in named]
    out.write_text("\n".join([*named, *rest]) + "\n", encoding="utf-8")
    return out


def _hpo_subset() -> Any:
    """Built-in HPO phenotypes of the nervous and cardiovascular systems (every term), and
    every disease of its annotations that has 'heart' or 'seizure' in a name."""
    from termnorm.kg import KGFormat, KnowledgeGraph, SourceSpec, build_kg

    kg, _ = build_kg([SourceSpec(KGFormat.HPO, None, {})])
    wanted = {"Abnormality of the nervous system", "Abnormality of the cardiovascular system"}
    typed = kg.concepts["semantic_types"].map(lambda types: bool(wanted & set(types)))
    keep = set(kg.concepts.loc[typed, "concept_id"])
    return KnowledgeGraph(
        concepts=kg.concepts[kg.concepts["concept_id"].isin(keep)].reset_index(drop=True),
        terms=kg.terms[kg.terms["concept_id"].isin(keep)].reset_index(drop=True),
        relations=kg.relations.iloc[0:0],
    )


@pytest.fixture()
def fresh_caches() -> Iterator[None]:
    """No default index remembered in-process from an earlier test, and none left behind."""
    from termnorm.search import build

    build.clear_caches()
    yield
    build.clear_caches()


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_caches")
def test_the_api_block_runs_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termnorm.cli.main import main
    from termnorm.index import default

    medic = require_benchmarks("medic", "medic_06Jul2012.txt")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(default, "default_kg", _hpo_subset)
    subset = _medic_subset(medic, tmp_path / "medic_subset.txt")
    for argv in (
        ["kg", "build", str(subset), "--format", "medic", "--out", "kg/medic"],
        ["index", "build", "--kg", "kg/medic", "--out", "idx/medic", "--threads", "1"],
    ):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code in (0, None), argv
    Path("my_terms.tsv").write_text("MESH:D049950\tprimary HPT\n", encoding="utf-8")
    Path("in.tsv").write_text("term\nheart attack\nhypertension\n", encoding="utf-8")

    namespace: dict[str, Any] = {}
    for statement in ast.parse(api_block()).body:
        code = ast.unparse(statement)
        if isinstance(statement, ast.Expr):
            value = eval(compile(ast.Expression(statement.value), "README", "eval"), namespace)
            if isinstance(value, list):
                assert value, f"returns nothing as shown: {code}"
                if value and isinstance(value[0], list):
                    assert all(value), f"a term gets nothing as shown: {code}"
        else:
            exec(compile(ast.Module([statement], []), "README", "exec"), namespace)
    assert Path("out.tsv").read_text(encoding="utf-8").count("\n") >= 3


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_caches")
def test_the_spacy_block_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a fresh install: no index built by hand, the default one built on first use
    (an HPO subset here, which can only lose entities)."""
    pytest.importorskip("spacy")
    from termnorm.index import default

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(default, "default_kg", _hpo_subset)
    block = next(b for b in python_blocks() if SPACY_PIPE in b)
    exec(compile(block, "README", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed, "the spaCy block finds no entity as shown"
    assert any(line.split()[0] == "seizures" and "HP:0001250" in line for line in printed)
