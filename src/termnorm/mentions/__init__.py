"""Annotated mentions: one reader per file format, one :class:`Mention` record for all, synonym
files as ``(text, gold_ids)`` pairs, and the splitting of composite mentions."""

from termnorm.mentions.composite import CompositeRule, split_composite
from termnorm.mentions.mention import (
    Mention,
    MentionFormat,
    MentionKind,
    make_mention,
    parse_gold_ids,
)
from termnorm.mentions.reader import detect_format, parse_format, read_mentions
from termnorm.mentions.synonyms import SynonymSource, load_synonyms, mention_pairs, read_synonyms
from termnorm.mentions.tsv import Target, read_targets

__all__ = [
    "CompositeRule",
    "Mention",
    "MentionFormat",
    "MentionKind",
    "SynonymSource",
    "Target",
    "detect_format",
    "load_synonyms",
    "make_mention",
    "mention_pairs",
    "parse_format",
    "parse_gold_ids",
    "read_mentions",
    "read_synonyms",
    "read_targets",
    "split_composite",
]
