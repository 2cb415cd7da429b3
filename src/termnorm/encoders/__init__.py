"""Text → vectors: transformer encoders with CLS or mean pooling."""

from termnorm.encoders.pooling import Pooling, pool
from termnorm.encoders.transformer import DEFAULT_MAX_LENGTH, TermEncoder, default_model_path

__all__ = ["DEFAULT_MAX_LENGTH", "Pooling", "TermEncoder", "default_model_path", "pool"]
