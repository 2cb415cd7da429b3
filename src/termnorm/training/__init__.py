"""KG → better encoder: samplers, the CODER objective, the trainer, checkpoints, DDP."""

from termnorm.training.config import FIELD_HELP, LossKind, Precision, TrainConfig
from termnorm.training.distributed import DistInfo, init_distributed
from termnorm.training.hard_negatives import nearest_neighbours
from termnorm.training.objective import CoderModel
from termnorm.training.sampler import Batch, KGSampler
from termnorm.training.trainer import LOG_FILE, DevEvaluator, Trainer, TrainResult

__all__ = [
    "FIELD_HELP",
    "LOG_FILE",
    "Batch",
    "CoderModel",
    "DevEvaluator",
    "DistInfo",
    "KGSampler",
    "LossKind",
    "Precision",
    "TrainConfig",
    "TrainResult",
    "Trainer",
    "init_distributed",
    "nearest_neighbours",
]
