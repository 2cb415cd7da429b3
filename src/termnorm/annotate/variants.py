"""Word variants: a text word no name holds, read as the name word it inflects or derives.

The dictionary's keys (:func:`~termnorm.annotate.tokens.content_key`) fold the regular English
plural and a few adjective/noun pairs on both sides. What they leave apart are the Latin and
Greek plurals ("nevi", "phalanges", "foramina", "stenoses"), the irregular ones ("teeth") and
adjectives that English makes from a noun with a suffix ("ataxic" gait, "polydactylous",
"edematous", "ventricular", "pharyngeal"). FastHPOCR covers these with a list of clusters of
morphologically equivalent words; here they are a table of suffix pairs (:data:`VARIANTS`)
and a few irregular words (:data:`IRREGULAR`), and each is checked against the names:

**A variant is taken only when it is a name word.** :func:`variant_keys` gives the keys a
text word would have as each variant; the dictionary detector asks for them only for a word
whose own key is in no name, and takes the first that is a name's key. So a rule never
changes how a name word is read, and it cannot invent a word: "nevi" becomes "nevus" because
HPO writes "nevus", and a word whose variant no name holds stays a word in no name (it
blocks a match, as before).

**Paraphrases** (data: ``data/paraphrases.tsv``, after FastHPOCR's base synonyms) are groups
of words a name may be written with in place of each other, each under its rule: ``generic``
(abnormality, abnormal, anomaly, defect...), ``organ`` (skin / cutaneous, eye / ocular...),
``quantity`` (numerous / multiple, decreased / reduced...). The dictionary reads the words of
a group of the rules asked for as one name word where one of them is a name word:
"cutaneous abnormalities" is found where HPO writes "Abnormality of the skin" (the
normalizer still picks the concept). The ``optional`` rule's words are qualifiers a name of
3 or more words may be written without ("Localized skin lesion" is found as "skin lesions").
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from functools import lru_cache
from importlib.resources import files

from termnorm.annotate.tokens import content_key

__all__ = [
    "IRREGULAR",
    "RULES_DIGEST",
    "VARIANTS",
    "optional_words",
    "paraphrase_groups",
    "paraphrase_rules",
    "variant_keys",
]

VARIANTS: tuple[tuple[str, str], ...] = (
    # Latin and Greek plurals
    ("ae", "a"),  # vertebrae, fistulae, striae
    ("i", "us"),  # nevi, naevi, bronchi
    ("ices", "ex"),  # apices, cortices
    ("ices", "ix"),  # appendices, cervices
    ("ges", "x"),  # phalanges, larynges
    ("ina", "en"),  # foramina, lumina
    ("ata", "a"),  # stomata, carcinomata
    ("a", "um"),  # septa, diverticula
    ("ses", "sis"),  # stenoses, exostoses, synostoses
    # adjectives made from a noun
    ("ic", "ia"),  # ataxic, dystonic, hypotonic
    ("ic", "y"),  # myopathic, neuropathic
    ("atous", "a"),  # edematous, hemangiomatous, myxomatous
    ("ous", "y"),  # polydactylous, syndactylous
    ("ular", "le"),  # ventricular, clavicular, follicular, tubular
    ("ngeal", "nx"),  # pharyngeal, laryngeal
)
"""``(suffix, replacement)``: a word ending in ``suffix`` may be the name word with
``replacement`` instead; tried in this order."""

IRREGULAR: dict[str, str] = {"teeth": "tooth", "feet": "foot", "children": "child"}
"""Plurals no suffix pair makes, by their singular."""

_SHORTEST_BASE = 3  # letters left before the suffix
RULES_DIGEST = hashlib.sha256(repr((VARIANTS, IRREGULAR, _SHORTEST_BASE)).encode()).hexdigest()[:16]
"""What a compiled dictionary's variant pairs were made by (its cache key holds it)."""


@lru_cache(maxsize=1 << 16)
def variant_keys(word: str) -> tuple[str, ...]:
    """The keys ``word`` would have as each of its variants (:data:`IRREGULAR` first, then
    :data:`VARIANTS` in order), each once, its own key left out; ``()`` for a word that is
    not alphabetic or is under 4 letters."""
    folded = word.casefold()
    if len(folded) < 4 or not folded.isalpha():
        return ()
    forms = [IRREGULAR[folded]] if folded in IRREGULAR else []
    forms += [
        folded[: -len(suffix)] + replacement
        for suffix, replacement in VARIANTS
        if folded.endswith(suffix) and len(folded) - len(suffix) >= _SHORTEST_BASE
    ]
    own = content_key(word)
    keys = (content_key(form) for form in forms)
    return tuple(dict.fromkeys(k for k in keys if k and k != own))


_OFF = "none"
_OPTIONAL = "optional"  # the rule whose words a name may be written without, not a group


@lru_cache(maxsize=1)
def _paraphrase_table() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(rule, words)`` of each group of ``data/paraphrases.tsv`` (``rule<TAB>word, word,
    ...`` a line, ``#`` comments), in file order."""
    text = files("termnorm.annotate").joinpath("data/paraphrases.tsv").read_text("utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    return tuple((rule, tuple(w.strip() for w in words.split(","))) for rule, words in rows)


def paraphrase_rules(value: str) -> tuple[str, ...]:
    """The rule names of a comma-separated ``value`` (``"none"``: none), in table order; a
    name that is no rule of the shipped table is a ``ValueError`` listing the known ones."""
    known = list(dict.fromkeys(rule for rule, _ in _paraphrase_table()))
    asked = {n.strip() for n in value.split(",") if n.strip() and n.strip() != _OFF}
    if unknown := sorted(asked.difference(known)):
        raise ValueError(
            f"unknown paraphrase rule(s) {', '.join(unknown)}; known: {', '.join(known)} or {_OFF}"
        )
    return tuple(rule for rule in known if rule in asked)


def paraphrase_groups(rules: Collection[str]) -> tuple[tuple[str, ...], ...]:
    """The shipped groups of words a name may be written with in place of each other, of
    the given ``rules`` (:func:`paraphrase_rules`; not ``optional``), in file order."""
    return tuple(w for rule, w in _paraphrase_table() if rule in rules and rule != _OPTIONAL)


def optional_words(rules: Collection[str]) -> tuple[str, ...]:
    """The words a name may be written without (the ``optional`` rule's), when
    ``rules`` holds it."""
    if _OPTIONAL not in rules:
        return ()
    return tuple(w for rule, ws in _paraphrase_table() if rule == _OPTIONAL for w in ws)
