"""The thin public API: lazy import, build/load/normalize, the cached default index."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import termnorm
from conftest import make_tiny_kg
from termnorm import api
from termnorm.errors import ArtifactMismatchError
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.search import Candidate, QueryError
from termnorm.search.build import clear_caches


@pytest.fixture(autouse=True)
def fresh_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Empty API caches and a private cache folder for each test."""
    clear_caches()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))


@pytest.fixture()
def index_dir(tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path) -> Path:
    api.build_index(tiny_kg_dir, model=tiny_bert_path, out=tmp_path / "idx", show_progress=False)
    return tmp_path / "idx"


def test_import_does_no_work() -> None:
    code = (
        "import sys, termnorm; "
        "print(sorted(m for m in ('termnorm.api', 'torch', 'pandas', 'faiss') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert termnorm.normalize is api.normalize  # resolved lazily on first access


def test_build_load_and_normalize(index_dir: Path) -> None:
    assert api.load_index(index_dir) is api.load_index(str(index_dir))  # cached
    one = termnorm.normalize("heart attack", index=index_dir)
    assert len(one) == 5 and all(isinstance(c, Candidate) for c in one)
    assert [c.rank for c in one] == [1, 2, 3, 4, 5]
    assert len({c.concept_id for c in one}) == 5
    many = termnorm.normalize(["heart attack", "asthma"], index=index_dir, k=2)
    assert [len(x) for x in many] == [2, 2]
    # batched with a longer text the query is padded: the same answer up to float32 rounding
    assert [c.concept_id for c in many[0]] == [c.concept_id for c in one[:2]]
    assert [c.score for c in many[0]] == pytest.approx([c.score for c in one[:2]], abs=1e-5)
    concept = termnorm.normalize("asthma", index=index_dir, k=1, mode="concept")
    assert concept[0].matched_term == concept[0].name


def test_normalizer_is_cached_per_index_and_mode(index_dir: Path) -> None:
    term = api.get_normalizer(index_dir)
    assert api.get_normalizer(index_dir) is term
    assert api.get_normalizer(index_dir, "concept") is not term
    assert api.get_normalizer(index_dir, "concept").encoder is term.encoder
    assert api.search_space(index_dir) is term.space


def test_candidates_carry_provenance(index_dir: Path) -> None:
    best = termnorm.normalize("heart attack", index=index_dir, k=1)[0]
    info = api.lookup(best.concept_id, index=index_dir)
    term = next(t for t in info.synonyms if t.term == best.matched_term)
    assert best.source == "ontology" and best.term_source == term.source == "tiny"
    assert best.is_preferred == term.is_preferred
    assert best.semantic_types == info.semantic_types


def test_min_score_abstains(index_dir: Path, tmp_path: Path) -> None:
    best = termnorm.normalize("heart attack", index=index_dir, k=1)[0].score
    assert termnorm.normalize("heart attack", index=index_dir, k=1, min_score=best)[0].score == best
    # scores are cosines: only a KG term's own vector reaches 1, and more is refused
    assert termnorm.normalize(["qzx"], index=index_dir, min_score=1.0) == [[]]
    with pytest.raises(ValueError, match=r"min_score is a cosine and must be in \[-1, 1\]"):
        termnorm.normalize(["qzx"], index=index_dir, min_score=1.01)
    src = tmp_path / "in.csv"
    src.write_text("term\nqzx\n\n")
    report = termnorm.normalize_file(src, tmp_path / "out.csv", index=index_dir, min_score=1.0)
    assert (report.rows, report.errors, report.abstained) == (2, 1, 1)
    assert "no concept scored >= 1" in (tmp_path / "out.csv").read_text()


def test_filters_restrict_the_answer(index_dir: Path) -> None:
    lung = termnorm.normalize("heart attack", index=index_dir, k=3, semantic_types=["lung"])
    assert [c.semantic_types for c in lung] == [("lung",)] * 3
    assert len(termnorm.normalize("MI", index=index_dir, k=20, namespaces=["T"])) == 10
    with pytest.raises(ValueError, match="unknown namespace 'HP': the index has 'T'"):
        termnorm.normalize("MI", index=index_dir, namespaces=["HP"])


def test_lookup_by_id(index_dir: Path) -> None:
    info = api.lookup("0004", index=index_dir)  # the namespace is optional
    assert (info.concept_id, info.name, info.semantic_types) == ("T:0004", "asthma", ("lung",))
    assert ("asthma", "tiny", True) in [(t.term, t.source, t.is_preferred) for t in info.synonyms]
    with pytest.raises(KeyError, match="no concept 'T:9999'"):
        api.lookup("T:9999", index=index_dir)


def test_an_index_object_can_be_passed(tiny_kg_dir: Path, tiny_bert_path: Path) -> None:
    index = api.build_index(tiny_kg_dir, model=tiny_bert_path, show_progress=False)
    assert isinstance(index, TermIndex) and index.path is None
    assert len(termnorm.normalize("MI", index=index, k=3)) == 3


def test_bad_terms_raise_query_error(index_dir: Path) -> None:
    with pytest.raises(QueryError, match="whitespace-only"):
        termnorm.normalize("  ", index=index_dir)
    with pytest.raises(QueryError, match="row 1: not text"):
        termnorm.normalize(["MI", 3], index=index_dir)  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("terms", "message"),
    [
        (None, "expected a text or a list of texts, got None"),
        (42, "expected a text or a list of texts, got int"),
        (b"asthma", "got bytes: decode it first"),
        (["MI", b"asthma"], "row 1: not text: got bytes: decode it first"),
    ],
)
def test_terms_that_are_not_text_get_a_clear_query_error(
    index_dir: Path, terms: object, message: str
) -> None:
    with pytest.raises(QueryError, match=message):
        termnorm.normalize(terms, index=index_dir)  # type: ignore[call-overload]


def test_too_long_names_the_max_chars_option_the_api_has(index_dir: Path) -> None:
    with pytest.raises(QueryError, match=r"limit is 5; .*max_chars= in termnorm\.normalize"):
        termnorm.normalize("asthma attack", index=index_dir, max_chars=5)
    assert termnorm.normalize("asthma attack", index=index_dir, max_chars=20)


def test_normalize_file(index_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("term\nheart attack\n\n")
    report = termnorm.normalize_file(src, tmp_path / "out.csv", index=index_dir)
    assert (report.rows, report.errors, report.abstained) == (2, 1, 0)


def test_load_kg(tiny_kg_dir: Path) -> None:
    assert isinstance(termnorm.load_kg(tiny_kg_dir), KnowledgeGraph)


def test_load_index_refuses_other_folders(tmp_path: Path) -> None:
    with pytest.raises(ArtifactMismatchError, match="not a termnorm index folder"):
        api.load_index(tmp_path)


def test_default_index_is_built_once_and_cached(
    monkeypatch: pytest.MonkeyPatch, tiny_bert_path: Path, tmp_path: Path
) -> None:
    from termnorm.index import default

    built: list[int] = []

    def tiny_default_kg() -> KnowledgeGraph:
        built.append(1)
        return make_tiny_kg()

    monkeypatch.setattr(default, "default_kg", tiny_default_kg)
    monkeypatch.setattr(default, "default_model_path", lambda: tiny_bert_path)
    first = termnorm.normalize("heart attack", k=2)
    assert len(first) == 2 and built == [1]
    folder = default.default_index_dir()
    assert folder.parent == tmp_path / "cache" and folder.name.startswith("default-index-")
    assert (folder / "index.json").is_file()
    # a new process-level cache still finds the folder: no second build
    clear_caches()
    assert termnorm.normalize("heart attack", k=2) == first
    assert built == [1]
