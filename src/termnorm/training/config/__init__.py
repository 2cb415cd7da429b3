"""Training settings: the shared ones plus one section per objective, all ``termnorm train``
options (import-free: the CLI generates its flags from them at start-up)."""

from termnorm.training.config.coder import CoderLossConfig
from termnorm.training.config.injection import InjectionConfig
from termnorm.training.config.mtcg import ImplicationWeighting, MtcgConfig, NegativeKind
from termnorm.training.config.prototype import PrototypeConfig
from termnorm.training.config.sampler import KGSamplerConfig, check_batch_shape
from termnorm.training.config.shared import (
    PROTOTYPE_LOSSES,
    BatchKind,
    LossKind,
    Precision,
    SharedConfig,
    TrainData,
)
from termnorm.training.config.train_config import TrainConfig
from termnorm.training.config.triplet import TripletConfig

__all__ = [
    "PROTOTYPE_LOSSES",
    "BatchKind",
    "CoderLossConfig",
    "ImplicationWeighting",
    "InjectionConfig",
    "KGSamplerConfig",
    "LossKind",
    "MtcgConfig",
    "NegativeKind",
    "Precision",
    "PrototypeConfig",
    "SharedConfig",
    "TrainConfig",
    "TrainData",
    "TripletConfig",
    "check_batch_shape",
]
