"""How each KGE model trains by default: loss, initialisation, regulariser, negatives, lr.

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

Values were chosen on the ICD-10 tree and HPO with annotations (README, "Knowledge-graph
embeddings"); ``--lr`` and ``--negatives`` override them per run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from termnorm.kge.config import KGEConfig, KGEModelKind

__all__ = ["RECIPES", "KGERecipe", "build_model", "pipeline_arguments"]


@dataclass(frozen=True)
class KGERecipe:
    """A model's training defaults, in PyKEEN's terms (JSON-ready, saved on the card)."""

    loss: str
    lr: float
    negatives: int
    loss_kwargs: Mapping[str, Any] = field(default_factory=dict)
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Passed to the PyKEEN model besides ``embedding_dim`` (also when it is rebuilt)."""


_SMALL_INIT = {"entity_initializer": "xavier_normal", "relation_initializer": "xavier_normal"}

RECIPES: dict[KGEModelKind, KGERecipe] = {
    KGEModelKind.TRANSE: KGERecipe(loss="CrossEntropyLoss", lr=0.01, negatives=32),
    KGEModelKind.COMPLEX: KGERecipe(
        loss="CrossEntropyLoss",
        model_kwargs={**_SMALL_INIT, "regularizer": None},
        lr=0.01,
        negatives=4,
    ),
    KGEModelKind.ROTATE: KGERecipe(loss="CrossEntropyLoss", lr=0.01, negatives=32),
    KGEModelKind.SIMPLE: KGERecipe(
        loss="CrossEntropyLoss",
        model_kwargs={**_SMALL_INIT, "clamp_score": 20.0},
        lr=0.01,
        negatives=8,
    ),
}


def pipeline_arguments(config: KGEConfig) -> dict[str, Any]:
    """The model, loss, optimiser and negative-sampler arguments of PyKEEN's ``pipeline`` for
    ``config``: its model's recipe, with ``config.lr`` / ``config.negatives`` when set."""
    recipe = RECIPES[config.model]
    return {
        "model": config.model.pykeen_name,
        "model_kwargs": {"embedding_dim": config.dim, **recipe.model_kwargs},
        "loss": recipe.loss,
        "loss_kwargs": dict(recipe.loss_kwargs),
        "optimizer": "Adam",
        "optimizer_kwargs": {"lr": config.lr if config.lr is not None else recipe.lr},
        "training_loop": "sLCWA",
        "negative_sampler": "basic",
        "negative_sampler_kwargs": {
            "num_negs_per_pos": (
                config.negatives if config.negatives is not None else recipe.negatives
            )
        },
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
