"""A trained KGE as a tail scorer: the PyKEEN model's own score f(h, r, t) for every candidate t.

:class:`KGETailScorer` rebuilds the PyKEEN model of a KGE folder (same model class and
embedding size, the entity and relation ids of ``entities.parquet`` / ``relations.parquet``)
and loads its saved parameters, so ``termnorm eval linkpred`` can rank held-out edges with
the model's interaction function (TransE's −‖h + r − t‖, ComplEx's Re⟨h, r, t̄⟩, ...) next to
an encoder's relation head. Needs the ``kge`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import torch

from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.kge._pykeen import require_pykeen
from termnorm.kge.config import KGEModelKind
from termnorm.kge.folder import (
    ENTITIES_FILE,
    PARAMS_FILE,
    RELATIONS_FILE,
    check_kg,
    load_split,
    read_kge_card,
)
from termnorm.kge.recipes import build_model

__all__ = ["KGETailScorer"]


class KGETailScorer:
    """Scores (h, r, ?) against candidate tails with a KGE folder's PyKEEN model.

    Args:
        folder: a folder written by ``termnorm kge train``.
        kg: when given, refused unless it is the KG the KGE was trained on.
    """

    def __init__(self, folder: str | Path, kg: KnowledgeGraph | None = None) -> None:
        require_pykeen()
        from pykeen.triples import TriplesFactory

        self.folder = Path(folder)
        self.card = read_kge_card(self.folder)
        if kg is not None:
            check_kg(self.card, kg, self.folder)
        entities = pq.read_table(self.folder / ENTITIES_FILE).to_pandas()
        relations = pq.read_table(self.folder / RELATIONS_FILE).to_pandas()
        self.entity_id = {
            str(c): int(i)
            for c, i in zip(entities["concept_id"], entities["entity_id"], strict=True)
        }
        self.relation_id = {
            str(r): int(i)
            for r, i in zip(relations["relation"], relations["relation_id"], strict=True)
        }
        # cards from before the recipes (issue 32) have no "training": PyKEEN's defaults
        training = self.card.get("training", {})
        split = load_split(self.folder)
        train = split.loc[split["part"] == "train", ["head", "relation", "tail"]]
        factory = TriplesFactory.from_labeled_triples(
            train.to_numpy(dtype=str),
            entity_to_id=self.entity_id,
            relation_to_id=self.relation_id,
            # 1-N models were trained with a reciprocal relation per relation
            create_inverse_triples=bool(training.get("reciprocal_relations", False)),
        )
        config = self.card.get("config", {})
        kind = KGEModelKind(config.get("model"))
        model_kwargs = training.get("model_kwargs", {})
        self.model: Any = build_model(
            kind,
            int(config["dim"]),
            # the seed is overwritten by the state; PyKEEN warns without one
            {**model_kwargs, "random_seed": int(config.get("seed", 0))},
            factory,
        )
        state = torch.load(self.folder / PARAMS_FILE, map_location="cpu", weights_only=True)
        try:
            self.model.load_state_dict(state)
        except RuntimeError as exc:
            raise ArtifactMismatchError(
                f"{self.folder / PARAMS_FILE} does not fit a {kind.pykeen_name} of dimension "
                f"{config['dim']} ({exc}); retrain the KGE with 'termnorm kge train'"
            ) from exc
        self.model.eval()
        self.name = f"KGE {kind.value} ({self.folder.name})"
        self.labels: Sequence[str] = sorted(self.relation_id)

    def concepts(self) -> set[str]:
        """The concepts the KGE has an entity for."""
        return set(self.entity_id)

    def score_tails(
        self, heads: Sequence[str], relations: Sequence[str], candidates: Sequence[str]
    ) -> np.ndarray:
        """``[len(heads), len(candidates)]`` scores f(h_b, r_b, c) (higher = more plausible);
        every head, relation and candidate must be known to the KGE."""
        pairs = zip(heads, relations, strict=True)
        hr = torch.tensor(
            [[self.entity_id[h], self.relation_id[r]] for h, r in pairs], dtype=torch.long
        )  # [B, 2]
        columns = torch.tensor([self.entity_id[c] for c in candidates], dtype=torch.long)
        with torch.no_grad():
            # predict_t maps relation r to the model's row (2r with reciprocal relations)
            scores = self.model.predict_t(hr_batch=hr)  # [B, n_entities]
        return scores[:, columns].float().cpu().numpy()
