"""Mention datasets: one reader per file format, one :class:`Mention` record for all."""

from termnorm.evaluation.datasets.mention import (
    Mention,
    MentionFormat,
    MentionKind,
    make_mention,
    parse_gold_ids,
)
from termnorm.evaluation.datasets.reader import detect_format, parse_format, read_mentions
from termnorm.evaluation.datasets.tsv import Target, read_targets

__all__ = [
    "Mention",
    "MentionFormat",
    "MentionKind",
    "Target",
    "detect_format",
    "make_mention",
    "parse_format",
    "parse_gold_ids",
    "read_mentions",
    "read_targets",
]
