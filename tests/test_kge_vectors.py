"""KGE vectors without PyKEEN: cosine lookups, the real view of complex vectors, the
evaluator adapters (MCSM by concept ID, relatedness by term)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from termnorm.evaluation.mcsm import MCSMEvaluator, mcsm_max
from termnorm.evaluation.relatedness import RelatednessEvaluator, RelatednessPairs
from termnorm.kg import KnowledgeGraph
from termnorm.kge import KGEVectors, TermEmbedder, kg_named_by_id, real_vectors
from termnorm.kge.embedders import ConceptIdEmbedder


def _kge(ids: list[str], vectors: list[list[float]]) -> KGEVectors:
    return KGEVectors(ids, np.array(vectors, dtype=np.float32), ["r"], np.ones((1, 2)))


def test_similarity_is_the_cosine_matrix() -> None:
    kge = _kge(["a", "b", "c"], [[1, 0], [3, 3], [-2, 0]])
    sim = kge.similarity(["a", "b"], ["a", "b", "c"])
    want = np.array([[1.0, 2**-0.5, -1.0], [2**-0.5, 1.0, -(2**-0.5)]])
    np.testing.assert_allclose(sim, want, atol=1e-6)
    assert sim.dtype == np.float32 and sim.min() >= -1.0 and sim.max() <= 1.0


def test_unknown_concepts_raise_unless_a_value_is_given() -> None:
    kge = _kge(["a", "b"], [[1, 0], [0, 1]])
    assert kge.has(["a", "zz"]).tolist() == [True, False]
    with pytest.raises(KeyError, match=r"no KGE vector.*'zz'"):
        kge.similarity(["a"], ["zz", "b"])
    sim = kge.similarity(["a", "zz"], ["zz", "b"], missing=0.25)
    np.testing.assert_allclose(sim, [[0.25, 0.0], [0.25, 0.25]])


def test_mismatched_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="2 concept IDs for 3 entity vectors"):
        KGEVectors(["a", "b"], np.zeros((3, 2)), [], np.zeros((0, 2)))


class _Rep:
    """Stands for a PyKEEN representation: ``rep(indices=None)`` returns all rows."""

    def __init__(self, x: torch.Tensor) -> None:
        self.x = x

    def __call__(self, indices: None = None) -> torch.Tensor:
        return self.x


def test_complex_vectors_become_re_then_im_and_their_cosine_is_the_hermitian_one() -> None:
    gen = torch.Generator().manual_seed(0)
    z = torch.complex(torch.randn(5, 4, generator=gen), torch.randn(5, 4, generator=gen))
    real = real_vectors([_Rep(z)])
    assert real.shape == (5, 8)
    np.testing.assert_allclose(real[:, :4], z.real.numpy())
    np.testing.assert_allclose(real[:, 4:], z.imag.numpy())
    kge = KGEVectors([str(i) for i in range(5)], real, [], np.zeros((0, 8)))
    norms = z.abs().square().sum(1).sqrt()  # [5]
    want = (z @ z.conj().T).real / (norms[:, None] * norms[None, :])  # Re⟨a, b̄⟩ / (‖a‖‖b‖)
    sim = kge.similarity(list("01234"), list("01234"))
    np.testing.assert_allclose(sim, want.numpy(), atol=1e-5)
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-6)


def test_several_representations_are_concatenated() -> None:
    h, t = torch.ones(3, 2), torch.zeros(3, 2)
    assert real_vectors([_Rep(h), _Rep(t)]).tolist() == [[1, 1, 0, 0]] * 3


def _kg() -> KnowledgeGraph:
    concepts = [
        {"concept_id": "A", "name": "Heart attack", "semantic_types": ["x"]},
        {"concept_id": "B", "name": "Stroke", "semantic_types": ["x"]},
        {"concept_id": "C", "name": "Cold", "semantic_types": ["y"]},
        {"concept_id": "D", "name": "Common cold", "semantic_types": ["y"]},
    ]
    terms = [
        {"concept_id": "A", "term": "Heart attack"},
        {"concept_id": "A", "term": "MI"},
        {"concept_id": "B", "term": "Stroke"},
        {"concept_id": "B", "term": "Infarct"},
        {"concept_id": "C", "term": "Cold"},
        {"concept_id": "C", "term": "Coryza"},
        {"concept_id": "D", "term": "Common cold"},
        {"concept_id": "D", "term": "Cold"},
        {"concept_id": "D", "term": "Coryza"},
    ]
    return KnowledgeGraph.from_records(concepts, terms)


def test_terms_map_to_one_concept_preferred_names_first() -> None:
    kg = _kg()
    kge = _kge(["A", "B", "C", "D"], [[1, 0], [0.8, 0.6], [0, 1], [0.6, 0.8]])
    embedder = TermEmbedder(kge, kg)
    assert embedder.concept_of("  heart   ATTACK ") == "A"
    assert embedder.concept_of("infarct") == "B"
    assert embedder.concept_of("cold") == "C"  # C's name, D's synonym: the name wins
    assert embedder.concept_of("coryza") is None  # a synonym of two concepts
    assert embedder.concept_of("flu") is None
    vecs = embedder.encode(["MI", "coryza", "flu", "Stroke"])
    np.testing.assert_allclose(vecs, [[1, 0], [0, 0], [0, 0], [0.8, 0.6]], atol=1e-6)


def test_relatedness_is_scored_on_the_pairs_that_map_with_their_coverage() -> None:
    kg = _kg()
    kge = _kge(["A", "B", "C", "D"], [[1, 0], [0.8, 0.6], [0, 1], [0.6, 0.8]])
    pairs = RelatednessPairs(
        ["MI", "MI", "Stroke", "MI", "flu"],
        ["Stroke", "Cold", "Common cold", "Common cold", "MI"],
        {"score": [4.0, 1.0, 2.0, 3.0, 2.0]},
    )
    metrics = RelatednessEvaluator(pairs, name="toy")(TermEmbedder(kge, kg))
    assert metrics["toy_coverage"] == pytest.approx(4 / 5)
    # cosines 0.8, 0.0, 0.96, 0.6 against 4, 1, 2, 3: ranks (3, 1, 4, 2) vs (4, 1, 2, 3)
    assert metrics["toy_spearman"] == pytest.approx(0.4)


def test_mcsm_of_entity_vectors_by_concept_id() -> None:
    # type x on one axis, type y on the other: every neighbour of a concept within k=1 is
    # of its type, except for the unembedded concept E, which is skipped
    concepts = [
        {"concept_id": c, "name": f"n{c}", "semantic_types": [t]}
        for c, t in [("A", "x"), ("B", "x"), ("C", "y"), ("D", "y"), ("E", "y")]
    ]
    terms = [{"concept_id": c["concept_id"], "term": c["name"]} for c in concepts]
    kg = KnowledgeGraph.from_records(concepts, terms)
    kge = _kge(["A", "B", "C", "D"], [[1, 0.1], [1, 0], [0.1, 1], [0, 1]])
    result = MCSMEvaluator(kg_named_by_id(kg), k=1).evaluate(ConceptIdEmbedder(kge))
    assert result.mean == pytest.approx(mcsm_max(1))
    assert result.skipped_concepts == 1
    # the adapter embeds concept IDs, never names
    assert not ConceptIdEmbedder(kge).encode(["nA"]).any()
