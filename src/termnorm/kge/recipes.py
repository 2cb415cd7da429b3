"""How each KGE model trains by default: loss, initialisation, regulariser, negatives, lr,
training loop.

:data:`RECIPES` gives each :class:`~termnorm.kge.config.KGEModelKind` its
:class:`KGERecipe` (saved on the KGE folder's card); ``--lr``, ``--negatives`` and
``--batch-size`` override it per run. A recipe without ``negatives`` scores each (h, r) against
every entity (1-N, PyKEEN's LCWA loop, reciprocal relations); ``--negatives N`` makes it sLCWA
with N sampled negatives and no reciprocal relations. Why each model trains as it does, and the
runs that chose the values: ``docs/kge_recipes.md``; results: ``docs/results/kge_hpo.md``.
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
