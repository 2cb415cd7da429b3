"""Annotated mentions: one reader per file format, one :class:`Mention` record for all, synonym
files as ``(text, gold_ids)`` pairs, the splitting of composite mentions, the texts of the
mentions' documents and the abbreviations those define."""

from termnorm.mentions.abbreviations import (
    Abbreviation,
    AbbreviationError,
    AbbreviationMode,
    DocumentAbbreviations,
    Expansion,
    detect_abbreviations,
    expand,
    parse_abbreviation_mode,
    short_form_map,
)
from termnorm.mentions.composite import CompositeRule, split_composite
from termnorm.mentions.documents import read_documents
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
    "Abbreviation",
    "AbbreviationError",
    "AbbreviationMode",
    "CompositeRule",
    "DocumentAbbreviations",
    "Expansion",
    "Mention",
    "MentionFormat",
    "MentionKind",
    "SynonymSource",
    "Target",
    "detect_abbreviations",
    "detect_format",
    "expand",
    "load_synonyms",
    "make_mention",
    "mention_pairs",
    "parse_abbreviation_mode",
    "parse_format",
    "parse_gold_ids",
    "read_documents",
    "read_mentions",
    "read_synonyms",
    "read_targets",
    "short_form_map",
    "split_composite",
]
