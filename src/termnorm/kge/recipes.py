"""How each KGE model trains by default: loss, initialisation, regulariser, negatives, lr,
training loop.

PyKEEN's per-model defaults are tuned for 1,000-epoch reproductions (Trouillon et al.'s
ComplEx: AdaGrad lr 0.5; Kazemi et al.'s SimplE: AdaGrad lr 0.1, ``experiments/`` in PyKEEN).
With a CPU budget of minutes (Adam, one negative, tens of epochs) they did not learn on the
ICD-10 tree or on HPO (issue 32):

* **ComplEx** draws its embeddings from N(0, 1): a 128-dimensional trilinear score then has a
  spread of about ±11 before any training, the softplus loss fits the training triples by
  moving these large random vectors a little, and held-out triples rank at random (MRR 0.001
  on the ICD-10 tree). Its L2 regulariser on every looked-up embedding also doubled the time
  of an epoch. Recipe: Xavier-normal initialisation (small scores at the start), no
  regulariser (early stopping on the validation MRR bounds over-fitting), sampled softmax
  (below), 4 negatives.
* **SimplE** has the same N(0, 1) initialisation (PyKEEN's default initialiser) and the same
  failure (MRR 0.002; with 8 negatives and the sampled softmax still 0.0005); PyKEEN's default
  also builds *no* regulariser (its resolver gets ``None``) and no score clamp. Recipe: the score clamp of the authors' code
  (±20), the small initialisation of ComplEx, sampled softmax with 8 negatives.
* **TransE**: a margin ranking loss of margin 1 with one uniformly corrupted tail or head is
  satisfied almost at once on a tree (a random entity is far away), so training stops
  receiving gradient (MRR 0.006 on HPO). Recipe: sampled softmax with 32 negatives.
* **RotatE** learned with the old defaults (margin loss, one negative) but slowly (HPO MRR
  0.039 after 20 epochs). Recipe: sampled softmax with 32 negatives. (RotatE's own
  self-adversarial loss needs a margin matched to the embedding size: with margin 6 at
  dimension 32 it did not learn the chain fixture of the tests.)

The sampled softmax (PyKEEN's ``CrossEntropyLoss`` in sLCWA: −log of the positive's share
of exp(score) over the positive and its negatives) is shift-invariant, so it needs no margin
fitted to each model's score scale.

**1-N scoring for the bilinear models.** With a few sampled negatives ComplEx and SimplE
stopped at MRR 0.030 on HPO with annotations (target 0.05). The standard remedy for these
models (Dettmers et al. 2018, Lacroix et al. 2018, Ruffinelli et al. 2020) is to score each
(h, r) against *every* entity, a softmax over all 31,674 candidates (PyKEEN's LCWA loop with
``CrossEntropyLoss``), with a reciprocal relation r⁻¹ per relation so that the head side
(?, r, t) is trained too, as (t, r⁻¹, ?). For a bilinear score this is one matrix product per
batch of (h, r) pairs (an epoch costs more than a sampled one, but needs no [batch, entities,
dim] tensor); for the distance models (TransE, RotatE) it would materialise that tensor, so
they keep sampled negatives. A recipe without ``negatives`` trains this way; ``--negatives N``
turns it back into sLCWA with N negatives and no reciprocal relations (the earlier recipe).

Values were chosen on the ICD-10 tree and HPO with annotations (README, "Knowledge-graph
embeddings"); ``--lr``, ``--negatives`` and ``--batch-size`` override them per run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from termnorm.kge.config import KGEConfig, KGEModelKind

__all__ = ["RECIPES", "KGERecipe", "batch_size", "build_model", "negatives", "pipeline_arguments"]


@dataclass(frozen=True)
class KGERecipe:
    """A model's training defaults, in PyKEEN's terms (JSON-ready, saved on the card)."""

    loss: str
    lr: float
    negatives: int | None
    """Corrupted triples per positive (sLCWA); ``None``: 1-N scoring against every entity
    with reciprocal relations (LCWA)."""
    batch_size: int
    """Positive triples (sLCWA) or (h, r) pairs (LCWA) per batch."""
    loss_kwargs: Mapping[str, Any] = field(default_factory=dict)
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Passed to the PyKEEN model besides ``embedding_dim`` (also when it is rebuilt)."""


_SMALL_INIT = {"entity_initializer": "xavier_normal", "relation_initializer": "xavier_normal"}

RECIPES: dict[KGEModelKind, KGERecipe] = {
    KGEModelKind.TRANSE: KGERecipe(loss="CrossEntropyLoss", lr=0.01, negatives=32, batch_size=1024),
    KGEModelKind.COMPLEX: KGERecipe(
        loss="CrossEntropyLoss",
        model_kwargs={**_SMALL_INIT, "regularizer": None},
        lr=0.01,
        negatives=None,
        batch_size=256,
    ),
    KGEModelKind.ROTATE: KGERecipe(loss="CrossEntropyLoss", lr=0.01, negatives=32, batch_size=1024),
    KGEModelKind.SIMPLE: KGERecipe(
        loss="CrossEntropyLoss",
        model_kwargs={**_SMALL_INIT, "clamp_score": 20.0},
        lr=0.01,
        negatives=8,
        batch_size=1024,
    ),
}


def negatives(config: KGEConfig) -> int | None:
    """Negatives per positive of ``config``'s run: ``config.negatives``, else its model's
    recipe; ``None`` for 1-N scoring (LCWA with reciprocal relations)."""
    return config.negatives if config.negatives is not None else RECIPES[config.model].negatives


def batch_size(config: KGEConfig) -> int:
    """``config.batch_size``, else its model's recipe's."""
    if config.batch_size is not None:
        return config.batch_size
    return RECIPES[config.model].batch_size


def pipeline_arguments(config: KGEConfig) -> dict[str, Any]:
    """The model, loss, optimiser, training-loop and negative-sampler arguments of PyKEEN's
    ``pipeline`` for ``config``: its model's recipe, with ``config.lr`` / ``config.negatives``
    when set. 1-N runs (``negatives(config) is None``) need a training factory with inverse
    triples (:func:`termnorm.kge.split.with_reciprocal_relations`)."""
    recipe = RECIPES[config.model]
    count = negatives(config)
    sampling: dict[str, Any] = (
        {"training_loop": "LCWA"}
        if count is None
        else {
            "training_loop": "sLCWA",
            "negative_sampler": "basic",
            "negative_sampler_kwargs": {"num_negs_per_pos": count},
        }
    )
    return {
        "model": config.model.pykeen_name,
        "model_kwargs": {"embedding_dim": config.dim, **recipe.model_kwargs},
        "loss": recipe.loss,
        "loss_kwargs": dict(recipe.loss_kwargs),
        "optimizer": "Adam",
        "optimizer_kwargs": {"lr": config.lr if config.lr is not None else recipe.lr},
        **sampling,
    }


def build_model(
    kind: KGEModelKind, dim: int, model_kwargs: Mapping[str, Any], triples_factory: Any
) -> Any:
    """An untrained PyKEEN model of ``kind`` shaped like a saved one (``model_kwargs`` as on
    its card: the regulariser and score clamp change the module, not only the training)."""
    from pykeen.models import model_resolver

    return model_resolver.make(
        kind.pykeen_name,
        embedding_dim=dim,
        triples_factory=triples_factory,
        **{k: v for k, v in model_kwargs.items() if k != "embedding_dim"},
    )
