"""The dictionary detector: every name of an index (and the domain synonyms) found in a text.

**Matching scheme (exact, no regex per name).** A name is reduced to the multiset of its
content keys (:func:`termnorm.annotate.tokens.content_key`: stop words and punctuation
dropped, each word case-folded, accent-stripped and stemmed); each distinct key gets an
integer id, and the name is stored in one hash map under the *sorted* tuple of its key ids,
mapping to the sorted IDs of every concept that has such a name. A text is tokenized the same
way into its content tokens; a token whose key is in no name, and a sentence or clause end
(:data:`~termnorm.annotate.tokens.BARRIERS`), block every window. From each content token a
window grows one token at a time while the window stays under ``max_len`` — the longest
name that holds each of its keys — and every window's sorted key tuple is looked up. A name
therefore matches its tokens in any order, but only over consecutive content tokens (stop
words and punctuation between them are allowed, a list's comma aside: "Kidneys: polycystic"
and "disease of the kidney" match). Work per text is at most (content tokens × longest name) lookups, and far
less in practice; memory is one tuple per distinct name. Measured on a shared 2-core
machine: 1 M synthetic names of 1–6 words compile in ~23 s to ~0.7 GB (process peak), and a
250-word text whose every word is a name word (the worst case) takes ~3.5 ms; HPO's
phenotype names (58 k) run at ~1,300–2,400 GSC+ abstracts/s in one process
(``benchmarks/annotate_speed.py``).

**A list's comma ends a match**: a comma between two words of the text (not "1,25") blocks
every window, as a sentence end does, so the items of a list are not read as one name in
another order ("long philtrum, thin upper lip" is not "Thin philtrum"). A name written with
a comma ("Kidneys, polycystic") still matches its words in any order without it.

**Overlaps.** Where matched windows overlap, the longest in characters is kept; between two
of equal length, the one that starts first. An ambiguous name keeps all its concepts.

**Acronyms** match as written: a text word shaped like an acronym ("WAS") is looked up by its
case-sensitive key first, then as a plain word; a name's acronym matches only the capitals
(:func:`~termnorm.annotate.tokens.acronym_key`), so "was" and "all" are not names.

**Skipped names** (counted in :attr:`CompiledDictionary.skipped`): ``"short"`` — 2 characters
or fewer once stripped ("Q", "ab"), unless the name is one acronym ("MI", "RA"); ``"no_content"`` — names made only of stop words or
punctuation. Single letters inside a longer name still count ("vitamin A").

**Cache.** :meth:`DictionaryDetector.save` writes a folder (``dictionary.json`` card,
``entries.json``; JSON, no pickle); the card holds the SHA-256 of the names and of the
synonyms it was built from and the version of the key rules, and ``from_index(...,
cache=FOLDER)`` reuses ``FOLDER/<key>`` when they match, building and saving it otherwise.
The key is the digest of the names themselves rather than the index card's KG fingerprint:
an index or KG built in memory has no fingerprint, and a digest of the content cannot go
stale (the card records the index's KG under ``source`` for the reader).
"""

from __future__ import annotations

import hashlib
import json
import logging
import weakref
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm._artifacts import atomic_dir, write_card
from termnorm.annotate.spans import Span
from termnorm.annotate.tokens import BARRIERS, Token, acronym_key, content_key, tokenize
from termnorm.annotate.variants import RULES_DIGEST, optional_words, paraphrase_groups, variant_keys
from termnorm.errors import ArtifactMismatchError

if TYPE_CHECKING:
    from termnorm.index import TermIndex
    from termnorm.kg import KnowledgeGraph

__all__ = [
    "CompiledDictionary",
    "DictionaryDetector",
    "compile_names",
    "merge_variants",
    "name_keys",
]

logger = logging.getLogger(__name__)

CARD_NAME = "dictionary.json"
ENTRIES_NAME = "entries.json"
FORMAT_VERSION = 1
KEY_RULES = 4  # raise when tokenize/content_key change what a key is: old caches are rebuilt
MIN_NAME_CHARS = 3
_BLOCK = -1  # a text token no window may hold
_Rules = tuple[bool, tuple[str, ...]]  # (variants, paraphrase rules)
_REBUILD = "delete the folder and build the detector again (it is a cache of the names)"


def name_keys(name: str) -> tuple[str, ...]:
    """The content keys of ``name`` in order: its words less the stop words, as keys; an
    acronym's key keeps its case (:func:`~termnorm.annotate.tokens.acronym_key`) unless the
    whole name is written in capitals and has more than one word."""
    words = [t.text for t in tokenize(name) if t.word]
    cased = len(words) == 1 or any(c.islower() for c in name)
    keys = ((cased and acronym_key(w)) or content_key(w) for w in words)
    return tuple(k for k in keys if k)


@dataclass(eq=False)
class CompiledDictionary:
    """Names compiled for matching: ``vocab`` (key -> id), ``entries`` (sorted key-id tuple
    -> sorted concept IDs), ``max_len`` (key id -> token count of the longest name holding
    it), ``skipped`` (reason -> names left out), ``card`` (what built it) and
    ``variant_pairs`` (key id, key id of a name word that is one of its variants:
    :mod:`termnorm.annotate.variants`)."""

    vocab: dict[str, int]
    entries: dict[tuple[int, ...], tuple[str, ...]]
    max_len: list[int]
    skipped: dict[str, int] = field(default_factory=dict)
    card: dict[str, Any] = field(default_factory=dict)
    variant_pairs: list[tuple[int, int]] = field(default_factory=list)


def compile_names(pairs: Iterable[tuple[str, str]]) -> CompiledDictionary:
    """Compile ``(concept_id, name)`` pairs (rules in the module docstring)."""
    vocab: dict[str, int] = {}
    found: dict[tuple[int, ...], set[str]] = {}
    skipped: Counter[str] = Counter()
    words: set[str] = set()
    for concept_id, name in pairs:
        if len(name.strip()) < MIN_NAME_CHARS and acronym_key(name.strip()) is None:
            skipped["short"] += 1
            continue
        keys = name_keys(name)
        if not keys:
            skipped["no_content"] += 1
            continue
        ids = tuple(sorted(vocab.setdefault(k, len(vocab)) for k in keys))
        found.setdefault(ids, set()).add(concept_id)
        words.update(t.text for t in tokenize(name) if t.word)
    entries = {ids: tuple(sorted(cids)) for ids, cids in found.items()}
    variant_pairs = sorted(
        {
            (vocab[own], vocab[k])
            for word in words
            if (own := content_key(word)) in vocab
            for k in variant_keys(word)
            if k in vocab
        }
    )
    max_len = _max_len(entries, len(vocab))
    return CompiledDictionary(vocab, entries, max_len, dict(skipped), variant_pairs=variant_pairs)


def merge_variants(
    compiled: CompiledDictionary,
    variants: bool = True,
    groups: Iterable[Sequence[str]] = (),
    optional: Iterable[str] = (),
) -> CompiledDictionary:
    """``compiled`` with each name word and the name words that are its variants
    (``variant_pairs``, with ``variants``) under one key id, and so the words of each of
    ``groups`` (:func:`~termnorm.annotate.variants.paraphrase_groups`) where one of them is a
    name word (a group word no name holds gets its id); the names that then share their keys
    merged. A name of 3 or more words holding an ``optional`` word is also a name without it,
    unless a name is written so."""
    vocab = dict(compiled.vocab)
    parent = list(range(len(vocab)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = i = parent[parent[i]]
        return i

    pairs = list(compiled.variant_pairs) if variants else []
    for group in groups:
        keys = [k for k in dict.fromkeys(map(content_key, group)) if k]
        held = [vocab[k] for k in keys if k in vocab]
        vocab.update({k: held[0] for k in keys if held and k not in vocab})
        pairs += [(held[0], i) for i in held[1:]]
    for a, b in pairs:
        parent[root(a)] = root(b)
    found: dict[tuple[int, ...], set[str]] = {}
    for ids, cids in compiled.entries.items():
        found.setdefault(tuple(sorted(map(root, ids))), set()).update(cids)
    vocab = {key: root(i) for key, i in vocab.items()}
    dropped = {vocab[k] for k in map(content_key, optional) if k in vocab}
    shorter = {
        ids[:n] + ids[n + 1 :]: cids
        for ids, cids in found.items()
        if len(ids) > 2
        for n, i in enumerate(ids)
        if i in dropped
    }
    found = {**shorter, **found}
    entries = {ids: tuple(sorted(cids)) for ids, cids in found.items()}
    max_len = _max_len(entries, len(parent))
    return CompiledDictionary(vocab, entries, max_len, compiled.skipped, compiled.card)


def _max_len(entries: Iterable[tuple[int, ...]], n_keys: int) -> list[int]:
    """Per key id, the token count of the longest entry that holds it."""
    out = [0] * n_keys
    for ids in entries:
        for i in ids:
            out[i] = max(out[i], len(ids))
    return out


_MERGED: weakref.WeakKeyDictionary[CompiledDictionary, dict[_Rules, CompiledDictionary]]
_MERGED = weakref.WeakKeyDictionary()


def _merged(compiled: CompiledDictionary, rules: _Rules) -> CompiledDictionary:
    """``compiled`` as matched under ``rules`` (``(variants, paraphrase rules)``, merged by
    :func:`merge_variants`), made once per compiled dictionary and rules."""
    if not any(rules):
        return compiled
    made = _MERGED.setdefault(compiled, {})
    if rules not in made:
        variants, paraphrases = rules
        groups, optional = paraphrase_groups(paraphrases), optional_words(paraphrases)
        made[rules] = merge_variants(compiled, variants, groups, optional)
    return made[rules]


def _list_comma(text: str, token: Token) -> bool:
    """Whether ``token`` is a comma that is not between two digits ("1,25-dihydroxy")."""
    if token.text != ",":
        return False
    before, after = text[token.start - 1 : token.start], text[token.end : token.end + 1]
    return not (before.isdigit() and after.isdigit())


def _read_json(folder: Path, name: str) -> dict[str, Any]:
    """The JSON object in ``folder/name``; a missing, unreadable or damaged file is refused."""
    path = folder / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArtifactMismatchError(
            f"{path} is not a readable dictionary file ({exc}); {_REBUILD}"
        ) from exc
    if not isinstance(data, dict):
        raise ArtifactMismatchError(f"{path} is damaged (not a JSON object); {_REBUILD}")
    return data


def _digest(pairs: Sequence[tuple[str, str]]) -> str:
    """SHA-256 of ``(concept_id, text)`` pairs in order."""
    h = hashlib.sha256()
    for concept_id, text in pairs:
        h.update(f"{concept_id}\x1f{text}\x1e".encode())
    return h.hexdigest()


class DictionaryDetector:
    """Finds the names of a :class:`CompiledDictionary` in texts (a
    :class:`~termnorm.annotate.spans.Detector`); build it with :meth:`from_index`,
    :meth:`from_kg` or :meth:`from_names`."""

    name = "dictionary"

    def __init__(
        self,
        compiled: CompiledDictionary,
        variants: bool = False,
        paraphrases: tuple[str, ...] = (),
    ) -> None:
        """``variants``: a text word no name holds is read as the name word it inflects or
        derives; ``paraphrases``: the words of each shipped group of these rules are read as
        one name word (both :mod:`termnorm.annotate.variants`)."""
        self.compiled = compiled
        self.variants = variants
        self.paraphrases = paraphrases
        self._ruled: dict[_Rules, DictionaryDetector] = {}
        matched = _merged(compiled, (variants, paraphrases))
        self._vocab = matched.vocab
        self._entries = matched.entries
        self._max_len = matched.max_len

    def with_rules(
        self, variants: bool = False, paraphrases: tuple[str, ...] = ()
    ) -> DictionaryDetector:
        """This dictionary with the given matching rules (its names shared, not copied), one
        detector per compiled dictionary and rules, so what is kept per detector stays."""
        rules = (variants, paraphrases)
        if rules == (self.variants, self.paraphrases):
            return self
        if rules not in self._ruled:
            self._ruled[rules] = DictionaryDetector(self.compiled, *rules)
        return self._ruled[rules]

    # ------------------------------------------------------------------ building
    @classmethod
    def from_names(
        cls,
        names: Iterable[tuple[str, str]],
        synonyms: Iterable[tuple[str, str]] = (),
        cache: str | Path | None = None,
        source: dict[str, Any] | None = None,
    ) -> DictionaryDetector:
        """From ``(concept_id, name)`` pairs and domain ``synonyms`` (pairs of the same form);
        with ``cache``, reuse ``cache/<key>`` built from the same names and synonyms, or
        build it and save it there. ``source`` describes the names in the card."""
        names, synonyms = list(names), list(synonyms)
        card = {
            "format_version": FORMAT_VERSION,
            "key_rules": KEY_RULES,
            "variant_rules": RULES_DIGEST,
            "names_sha256": _digest(names),
            "synonyms_sha256": _digest(synonyms),
            "source": source or {},
        }
        key = hashlib.sha256(
            json.dumps(
                [card[k] for k in ("key_rules", "variant_rules", "names_sha256", "synonyms_sha256")]
            ).encode()
        ).hexdigest()[:16]
        folder = Path(cache) / key if cache is not None else None
        if folder is not None and (folder / CARD_NAME).is_file():
            logger.info("dictionary: reusing %s", folder)
            return cls.load(folder)
        compiled = compile_names([*names, *synonyms])
        card["counts"] = {
            "names": len(names),
            "synonyms": len(synonyms),
            "entries": len(compiled.entries),
            "keys": len(compiled.vocab),
            **{f"skipped_{reason}": n for reason, n in sorted(compiled.skipped.items())},
        }
        compiled.card = card
        detector = cls(compiled)
        if folder is not None:
            detector.save(folder)
        return detector

    @classmethod
    def from_index(
        cls,
        index: TermIndex,
        synonyms: Iterable[tuple[str, str]] = (),
        cache: str | Path | None = None,
        concepts: Collection[str] | None = None,
    ) -> DictionaryDetector:
        """From every term of ``index`` (its ``terms`` table) plus domain ``synonyms``; with
        ``concepts``, only the names and synonyms of those concept IDs."""
        terms = index.terms
        names = list(zip(terms["concept_id"], terms["term"], strict=True))
        if concepts is not None:
            names = [pair for pair in names if pair[0] in concepts]
            synonyms = [pair for pair in synonyms if pair[0] in concepts]
        source = {"index": str(index.path) if index.path else None, "kg": index.card.get("kg")}
        return cls.from_names(names, synonyms, cache, source)

    @classmethod
    def from_kg(
        cls,
        kg: KnowledgeGraph,
        synonyms: Iterable[tuple[str, str]] = (),
        cache: str | Path | None = None,
    ) -> DictionaryDetector:
        """From every concept name and term of ``kg`` plus domain ``synonyms``."""
        names = list(zip(kg.concepts["concept_id"], kg.concepts["name"], strict=True))
        names += list(zip(kg.terms["concept_id"], kg.terms["term"], strict=True))
        return cls.from_names(names, synonyms, cache, {"kg": kg.fingerprint or None})

    # ------------------------------------------------------------------ matching
    def detect(self, text: str) -> list[Span]:
        """Every dictionary name in ``text``, overlaps resolved, sorted by ``(start, end)``."""
        starts, ends, ids = self._content_tokens(text)
        found = self._windows(ids)
        # longest first (characters), then the earlier start; keep what overlaps nothing kept
        found.sort(key=lambda m: (starts[m[0]] - ends[m[1]], starts[m[0]]))
        taken = [False] * len(ids)
        spans = []
        for i, j, concept_ids in found:
            if any(taken[i : j + 1]):
                continue
            taken[i : j + 1] = [True] * (j + 1 - i)
            start, end = starts[i], ends[j]
            spans.append(Span(start, end, text[start:end], self.name, concept_ids))
        return sorted(spans)

    def lookup(self, text: str) -> tuple[str, ...]:
        """The concepts of which the whole of ``text`` is a name (its words in any order, as
        :meth:`detect` matches them); ``()`` when it is none."""
        ids = self._content_tokens(text)[2]
        if not ids or _BLOCK in ids:
            return ()
        return self._entries.get(tuple(sorted(ids)), ())

    def _content_tokens(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """Starts, ends and key ids of the content tokens of ``text``; a key in no name and a
        barrier are :data:`_BLOCK`."""
        starts: list[int] = []
        ends: list[int] = []
        ids: list[int] = []
        vocab = self._vocab
        for token in tokenize(text):
            if token.word:
                acronym = acronym_key(token.text)
                key_id = vocab.get(acronym, _BLOCK) if acronym else _BLOCK
                if key_id == _BLOCK:
                    key = content_key(token.text)
                    if key is None:
                        continue
                    key_id = vocab.get(key, _BLOCK)
                if key_id == _BLOCK and self.variants:
                    key_id = next(
                        (vocab[k] for k in variant_keys(token.text) if k in vocab), _BLOCK
                    )
            elif token.text in BARRIERS or _list_comma(text, token):
                key_id = _BLOCK
            else:
                continue
            starts.append(token.start)
            ends.append(token.end)
            ids.append(key_id)
        return starts, ends, ids

    def _windows(self, ids: list[int]) -> list[tuple[int, int, tuple[str, ...]]]:
        """``(first, last, concept_ids)`` of every window of ``ids`` that is a name."""
        entries, max_len = self._entries, self._max_len
        found = []
        n = len(ids)
        for i in range(n):
            if ids[i] == _BLOCK:
                continue
            limit = n
            j = i
            while j < n and ids[j] != _BLOCK:
                limit = min(limit, max_len[ids[j]])
                if j - i + 1 > limit:
                    break
                hit = entries.get(tuple(sorted(ids[i : j + 1])))
                if hit is not None:
                    found.append((i, j, hit))
                j += 1
        return found

    # ------------------------------------------------------------------ storage
    def save(self, folder: str | Path) -> Path:
        """Write the compiled dictionary to ``folder`` atomically (JSON); return it."""
        compiled = self.compiled
        by_id = sorted(compiled.vocab, key=compiled.vocab.__getitem__)
        rows = [[list(ids), list(cids)] for ids, cids in compiled.entries.items()]
        with atomic_dir(folder) as tmp:
            pairs = [list(pair) for pair in compiled.variant_pairs]
            data = {"keys": by_id, "entries": rows, "variant_pairs": pairs}
            (tmp / ENTRIES_NAME).write_text(json.dumps(data))
            write_card(tmp, CARD_NAME, {**compiled.card, "skipped": compiled.skipped})
        return Path(folder)

    @classmethod
    def load(cls, folder: str | Path) -> DictionaryDetector:
        """Read a folder written by :meth:`save`; refuse a missing or damaged file and a
        dictionary of another format or key rules."""
        folder = Path(folder)
        card = _read_json(folder, CARD_NAME)
        if card.get("format_version") != FORMAT_VERSION or card.get("key_rules") != KEY_RULES:
            raise ArtifactMismatchError(
                f"{folder} holds a dictionary of format {card.get('format_version')} with key "
                f"rules {card.get('key_rules')}; this termnorm reads format {FORMAT_VERSION} "
                f"with key rules {KEY_RULES}: {_REBUILD}"
            )
        data = _read_json(folder, ENTRIES_NAME)
        vocab = {key: i for i, key in enumerate(data["keys"])}
        entries = {tuple(ids): tuple(cids) for ids, cids in data["entries"]}
        skipped = dict(card.pop("skipped", {}))
        max_len = _max_len(entries, len(vocab))
        pairs = [(a, b) for a, b in data["variant_pairs"]]
        return cls(CompiledDictionary(vocab, entries, max_len, skipped, card, pairs))
