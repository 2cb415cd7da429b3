"""Mining keyword vocabularies (sites, types) from the names of the KGs termnorm loads.

English diseases and phenotypes (:func:`mine_english_keywords`, any mix of HPO- and
MEDIC-like KGs):

* **sites** are the anatomical phrases HPO's names are built around: the organ-system
  branches (HPO's semantic types, ``Abnormality of the cardiovascular system`` →
  ``cardiovascular system``) and every concept name of the forms ``Abnormality of (the) X``,
  ``Abnormal X morphology``, ``Abnormal X physiology``, ``Morphological abnormality of (the)
  X``, ``Aplasia/Hypoplasia of (the) X`` with X of at most :data:`MAX_SITE_WORDS` words,
  letters only (``kidney``, ``renal``, ``lower limb``, ``pituitary gland``). A phrase of
  several words also gives its last word (``limb``, ``gland``) when that word is a site
  of :data:`MIN_HEAD_SITE_COUNT` phrases or more.
* **types** are the head words of disease names: the last word of a name, or for MeSH's
  inverted names (``Carcinoma, Renal Cell``) the last word before the first comma, counted
  over the concept names of the KGs; a head of at least :data:`MIN_TYPE_COUNT` names, of
  4+ letters, not a site and not in :data:`ENGLISH_STOPWORDS`, is a type (``syndrome``,
  ``carcinoma``, ``deficiency``, ``neoplasms``), with its singular when it ends in ``s``.

Chinese procedures (:func:`mine_chinese_procedure_keywords`, the ``zh`` names of the ICD-9
procedure KG). Names are split into segments at punctuation and the joining words of
:data:`ZH_JOINERS` (伴 "with", 和 "and", ...), and a leading modifier of
:data:`ZH_MODIFIERS` (其他 "other", 部分 "partial", 腹腔镜下 "laparoscopic", ...) is removed:

* **types** are segment endings (2 to :data:`ZH_MAX_LEN` characters) of at least
  :data:`ZH_MIN_TYPE_COUNT` concepts whose left neighbours (the character before them, or
  none) have a branching entropy of at least :data:`ZH_MIN_ENTROPY` nats — a word boundary,
  the standard unsupervised segmentation cue: ``切除术`` follows many different characters,
  ``除术`` nearly always ``切`` — and that end with a character ending at least
  :data:`ZH_MIN_FINAL_SHARE` of all segments (术, 查, ...);
* **sites** are segment beginnings (2 to :data:`ZH_MAX_LEN` characters) of at least
  :data:`ZH_MIN_SITE_COUNT` concepts with the same entropy test on their right neighbours,
  holding no type and not starting with a modifier; plus the one-character organs of
  :data:`ZH_ORGANS` (肝 liver, 肾 kidney, ...), which no frequency count tells from noise.

Grams holding a function word of :data:`ZH_FUNCTION_WORDS` (的, 其他, ...) are neither. The
result is noisy at the edges (``部位`` "site" is a site, ``造影`` "angiography" is found only
as ``造影图``/``造影术``); the ranker sees keywords as hints, and users can pass their own file.

Counts are over distinct concepts. The thresholds are module constants so that the shipped
files (``termnorm/kg/data``) are reproducible; they were built with::

    termnorm kg build --format icd9procs --lang zh,en --out kg/icd9procs
    termnorm kg keywords --kg kg/hpo --kg kg/medic --lang en --out keywords_en.tsv
    termnorm kg keywords --kg kg/icd9procs --lang zh --out keywords_zh_procedures.tsv

from the HPO and MEDIC KG folders of the benchmarks (``termnorm kg build --format hpo`` and
``--format medic`` on MEDIC of 6 July 2012); each file's first comment line names its KGs
and their fingerprints.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator

from termnorm.kg.graph import KnowledgeGraph
from termnorm.kg.keywords import KeywordVocabulary, is_cjk

__all__ = [
    "ENGLISH_STOPWORDS",
    "MAX_SITE_WORDS",
    "MIN_HEAD_SITE_COUNT",
    "MIN_TYPE_COUNT",
    "ZH_FUNCTION_WORDS",
    "ZH_JOINERS",
    "ZH_MAX_LEN",
    "ZH_MIN_ENTROPY",
    "ZH_MIN_FINAL_SHARE",
    "ZH_MIN_SITE_COUNT",
    "ZH_MIN_TYPE_COUNT",
    "ZH_MODIFIERS",
    "ZH_ORGANS",
    "mine_chinese_procedure_keywords",
    "mine_english_keywords",
]

MAX_SITE_WORDS = 3
MIN_HEAD_SITE_COUNT = 3
MIN_TYPE_COUNT = 8
ENGLISH_STOPWORDS = frozenset(
    [
        "type",
        "types",
        "form",
        "forms",
        "group",
        "with",
        "without",
        "from",
        "other",
        "others",
        "associated",
        "related",
        "autosomal",
        "dominant",
        "recessive",
        "linked",
        "syndromic",
        "nonsyndromic",
        "familial",
        "congenital",
        "hereditary",
        "acquired",
        "primary",
        "secondary",
        "chronic",
        "acute",
        "early",
        "late",
        "onset",
        "juvenile",
        "infantile",
        "adult",
        "childhood",
        "neonatal",
        "severe",
        "mild",
        "partial",
        "complete",
        "total",
        "unspecified",
        "specified",
        "included",
        "including",
        "induced",
        "plus",
        "young",
        "history",
        "positive",
        "positivity",
        "time",
        "site",
        "test",
        "ratio",
        "count",
        "level",
        "hrct",
        "logmar",
        "pattern",
        "appearance",
        "feature",
        "features",
        "change",
        "changes",
        "content",
        "interval",
        "proportion",
        "morphology",
        "physiology",
        "phenomenon",
        "sign",
        "state",
        "response",
        "sequence",
    ]
)
NOT_SITE_WORDS = frozenset(
    [
        "metabolism",
        "level",
        "function",
        "physiology",
        "pigmentation",
        "abduction",
        "cycle",
        "concentration",
        "morphology",
        "shape",
        "activity",
        "interstitial",
        "pathway",
        "conduction",
        "movement",
        "size",
        "position",
        "structure",
        "number",
        "count",
        "content",
    ]
)

ZH_MAX_LEN = 5
ZH_MIN_TYPE_COUNT = 8
ZH_MIN_SITE_COUNT = 5
ZH_MIN_ENTROPY = 1.5
ZH_MIN_FINAL_SHARE = 0.01
ZH_JOINERS = ("伴", "和", "及", "或", "与", "并")
ZH_MODIFIERS = (
    "其他", "部分", "全部", "根治性", "完全", "单侧", "双侧", "闭合性", "开放性",
    "经皮", "经", "腹腔镜下", "腹腔镜", "内镜下", "内镜", "胸腔镜下", "关节镜", "未特指",
    "特指", "去除", "置入", "修复", "诊断性", "治疗性", "显微镜", "非手术性",
)  # fmt: skip
ZH_FUNCTION_WORDS = ("的", "其他", "不", "用于", "应用")
ZH_ORGANS = frozenset(
    "肝肾肺胃脑眼耳鼻舌喉心脾胆肠肛腭唇齿牙颈胸腹骨皮乳睑膀胱".replace("膀胱", "")
)
_ZH_SPLIT = re.compile(r"[\s,，、;；:：()（）\[\]【】/]+|" + "|".join(ZH_JOINERS))
_HPO_SITE = [
    re.compile(p)
    for p in (
        r"^abnormality of (?:the )?(?P<x>.+)$",
        r"^abnormal (?P<x>.+?) (?:morphology|physiology)$",
        r"^morphological abnormality of (?:the )?(?P<x>.+)$",
        r"^aplasia/hypoplasia of (?:the )?(?P<x>.+)$",
    )
]
_LETTERS = re.compile(r"^[a-z]+(?:[ -][a-z]+)*$")


# --------------------------------------------------------------------------- English
def _site_phrase(name: str) -> str | None:
    text = name.strip().lower()
    for pattern in _HPO_SITE:
        match = pattern.match(text)
        if match:
            phrase = match.group("x").strip()
            words = phrase.replace("-", " ").split()
            plain = not set(words) & ({"and", "or", "of", "the"} | NOT_SITE_WORDS)
            if _LETTERS.match(phrase) and len(words) <= MAX_SITE_WORDS and plain:
                return phrase
    return None


def _english_sites(names: Iterable[str]) -> set[str]:
    phrases = {p for n in names if (p := _site_phrase(n)) is not None}
    heads = Counter(p.split()[-1] for p in phrases if " " in p)
    sites = set(phrases)
    sites.update(h for h, n in heads.items() if n >= MIN_HEAD_SITE_COUNT)
    return sites


def _head_word(name: str) -> str | None:
    head = name.split(",", 1)[0] if "," in name else name
    words = re.findall(r"[A-Za-z]+", head)
    return words[-1].lower() if words else None


def _english_types(names: Iterable[str], sites: set[str]) -> set[str]:
    counts = Counter(h for n in names if (h := _head_word(n)) is not None)
    site_words = {w for s in sites for w in s.split()}
    types: set[str] = set()
    for word, n in counts.items():
        if n < MIN_TYPE_COUNT or len(word) < 4 or word in ENGLISH_STOPWORDS:
            continue
        if word in site_words:
            continue
        singular = word[:-3] + "y" if word.endswith("ies") else word[:-1]
        if word.endswith("s") and (singular in site_words or singular in ENGLISH_STOPWORDS):
            continue
        types.add(word)
        if word.endswith("ies"):
            types.add(singular)
    return types - site_words


def mine_english_keywords(kgs: Iterable[KnowledgeGraph]) -> KeywordVocabulary:
    """Sites and types mined from the concept names (and semantic types) of ``kgs``; see
    the module doc. Deterministic: the same KGs give the same vocabulary."""
    names: list[str] = []
    branches: set[str] = set()
    for kg in kgs:
        names.extend(str(n) for n in kg.concepts["name"])
        for types in kg.concepts["semantic_types"]:
            branches.update(str(t) for t in types)
    sites = _english_sites([*names, *branches])
    return KeywordVocabulary(frozenset(sites), frozenset(_english_types(names, sites)), "en")


# --------------------------------------------------------------------------- Chinese
def _segments(name: str) -> Iterator[str]:
    for segment in _ZH_SPLIT.split(name):
        segment = "".join(ch for ch in segment if is_cjk(ch))
        changed = True
        while changed and segment:
            changed = False
            for modifier in ZH_MODIFIERS:
                if segment.startswith(modifier) and len(segment) > len(modifier):
                    segment = segment[len(modifier) :]
                    changed = True
        if len(segment) >= 2:
            yield segment


def _entropy(counts: Counter[str]) -> float:
    total = sum(counts.values())
    return -sum(n / total * math.log(n / total) for n in counts.values()) if total else 0.0


def _bounded(
    grams: dict[str, set[str]], neighbours: dict[str, Counter[str]], minimum: int
) -> set[str]:
    """Grams of ``minimum`` concepts or more whose outer neighbour characters (``^``: none)
    have a branching entropy of at least :data:`ZH_MIN_ENTROPY` nats."""
    return {
        gram
        for gram, concepts in grams.items()
        if len(concepts) >= minimum and _entropy(neighbours[gram]) >= ZH_MIN_ENTROPY
    }


def mine_chinese_procedure_keywords(kg: KnowledgeGraph, lang: str = "zh") -> KeywordVocabulary:
    """Sites and types mined from the ``lang`` names of a procedure KG (module doc)."""
    terms = kg.terms[kg.terms["lang"] == lang]
    if terms.empty:
        raise ValueError(f"the KG has no {lang!r} terms to mine keywords from")
    endings: dict[str, set[str]] = defaultdict(set)
    beginnings: dict[str, set[str]] = defaultdict(set)
    before: dict[str, Counter[str]] = defaultdict(Counter)
    after: dict[str, Counter[str]] = defaultdict(Counter)
    finals: Counter[str] = Counter()
    for concept, term in zip(terms["concept_id"], terms["term"], strict=True):
        for seg in _segments(str(term)):
            finals[seg[-1]] += 1
            for n in range(1, min(ZH_MAX_LEN, len(seg)) + 1):
                end, start = seg[-n:], seg[:n]
                endings[end].add(concept)
                beginnings[start].add(concept)
                before[end][seg[-n - 1] if len(seg) > n else "^"] += 1
                after[start][seg[n] if len(seg) > n else "$"] += 1
    total = sum(finals.values())
    type_finals = {ch for ch, n in finals.items() if n >= ZH_MIN_FINAL_SHARE * total}
    sites = {
        s
        for s in _bounded(beginnings, after, ZH_MIN_SITE_COUNT)
        if len(s) >= 2
        and not any(s.startswith(m) for m in ZH_MODIFIERS)
        and not any(f in s for f in ZH_FUNCTION_WORDS)
    }
    types = {
        t
        for t in _bounded(endings, before, ZH_MIN_TYPE_COUNT)
        if len(t) >= 2
        and t[-1] in type_finals
        and t not in sites
        and not any(f in t for f in ZH_FUNCTION_WORDS)
    }
    sites = {s for s in sites if not any(t in s for t in types)} | set(ZH_ORGANS)
    return KeywordVocabulary(frozenset(sites), frozenset(types - sites), "zh")
