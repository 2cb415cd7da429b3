"""Losses: ``nn.Module``s whose ``forward`` takes embeddings and labels and returns a scalar."""

from termnorm.losses.batch_hard_triplet import BatchHardSoftMarginTripletLoss, TripletDistance
from termnorm.losses.multi_similarity import (
    MultiSimilarityLoss,
    mine_hard_pairs,
    multi_similarity_from_similarity,
)
from termnorm.losses.relation import RelationLoss
from termnorm.losses.relation_head import RELATIONS_DIR, RelationHead, RelationKind
from termnorm.losses.semantic_type import SemanticTypeLoss
from termnorm.losses.transe import TransEMarginLoss, TransEMSLoss

__all__ = [
    "RELATIONS_DIR",
    "BatchHardSoftMarginTripletLoss",
    "MultiSimilarityLoss",
    "RelationHead",
    "RelationKind",
    "RelationLoss",
    "SemanticTypeLoss",
    "TransEMSLoss",
    "TransEMarginLoss",
    "TripletDistance",
    "mine_hard_pairs",
    "multi_similarity_from_similarity",
]
