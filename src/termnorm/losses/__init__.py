"""Losses: ``nn.Module``s whose ``forward`` takes embeddings and labels and returns a scalar."""

from termnorm.losses.batch_hard_triplet import BatchHardSoftMarginTripletLoss, TripletDistance
from termnorm.losses.distill import DistillationLoss
from termnorm.losses.implication import (
    ImplicationLoss,
    balanced_class_weights,
    implication_labels,
)
from termnorm.losses.listwise import ListwiseLoss
from termnorm.losses.margin_triplet import MarginTripletLoss
from termnorm.losses.multi_similarity import (
    MultiSimilarityLoss,
    label_pairs,
    mine_hard_pairs,
    multi_similarity_from_similarity,
    multi_similarity_with_margins,
)
from termnorm.losses.multi_similarity_v2 import MultiSimilarityV2Loss
from termnorm.losses.multi_similarity_v3 import MultiSimilarityV3Loss, kge_margins
from termnorm.losses.relation import RelationLoss
from termnorm.losses.relation_head import RELATIONS_DIR, RelationHead, RelationKind
from termnorm.losses.semantic_type import SemanticTypeLoss
from termnorm.losses.transe import TransEMarginLoss, TransEMSLoss

__all__ = [
    "RELATIONS_DIR",
    "BatchHardSoftMarginTripletLoss",
    "DistillationLoss",
    "ImplicationLoss",
    "ListwiseLoss",
    "MarginTripletLoss",
    "MultiSimilarityLoss",
    "MultiSimilarityV2Loss",
    "MultiSimilarityV3Loss",
    "RelationHead",
    "RelationKind",
    "RelationLoss",
    "SemanticTypeLoss",
    "TransEMSLoss",
    "TransEMarginLoss",
    "TripletDistance",
    "balanced_class_weights",
    "implication_labels",
    "kge_margins",
    "label_pairs",
    "mine_hard_pairs",
    "multi_similarity_from_similarity",
    "multi_similarity_with_margins",
]
