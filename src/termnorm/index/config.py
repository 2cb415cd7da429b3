"""Configuration of an index build: one dataclass whose ``help`` texts the CLI reuses."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from termnorm.index.base import Backend

__all__ = ["IndexBuildConfig", "field_help"]


def _help(text: str) -> dict[str, str]:
    return {"help": text}


@dataclass
class IndexBuildConfig:
    """Everything ``termnorm index build`` / :func:`termnorm.build_index` takes."""

    kg_dir: Path = field(metadata=_help("KG folder written by 'termnorm kg build'."))
    out: Path | None = field(default=None, metadata=_help("Index folder to write."))
    model: Path | None = field(
        default=None,
        metadata=_help("Encoder folder (HF or sentence-transformers); default all-MiniLM-L6-v2."),
    )
    pooling: str | None = field(
        default=None, metadata=_help("cls or mean; default: the model folder's own, else mean.")
    )
    backend: Backend = field(
        default=Backend.AUTO,
        metadata=_help("Search backend; auto picks from size and memory budget."),
    )
    memory_budget: str | None = field(
        default=None,
        metadata=_help("Memory the index may use, e.g. 4GB (default: half of this machine's)."),
    )
    max_length: int = field(default=32, metadata=_help("Max tokens per term."))
    batch_size: int = field(default=256, metadata=_help("Terms per encoder batch."))


def field_help(cls: type, name: str) -> str:
    """The ``help`` metadata of field ``name`` of dataclass ``cls``."""
    for f in fields(cls):
        if f.name == name:
            return str(f.metadata.get("help", ""))
    raise KeyError(name)
