"""Shared fixtures: a tiny random BERT (built once per session) and a tiny KG.

The tiny BERT has a character-level WordPiece vocabulary so that every string tokenizes,
4 layers of width 32, and random weights from a fixed seed: seconds to build, a few MB.
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from termnorm.encoders import Pooling, TermEncoder
from termnorm.kg import KnowledgeGraph

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
BENCHMARKS = SHARED / "benchmarks"

torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))


def require_benchmarks(*parts: str) -> Path:
    """Path under ../shared/benchmarks, or skip the test with a message when absent."""
    path = BENCHMARKS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"benchmark data not found at {path} (needs ../shared/benchmarks)")
    return path


def build_tiny_bert(folder: Path, seed: int = 0, hidden_size: int = 32) -> Path:
    """Write a randomly initialised BERT + char-level tokenizer to ``folder``."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    chars = string.ascii_lowercase + string.digits + string.punctuation
    extra = "éèàçñöüäß甲状腺肿物切除术心肌梗死"
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += list(chars + extra) + [f"##{c}" for c in chars + extra]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab=str(folder / "vocab.txt"), do_lower_case=True)
    if len(tokenizer) != len(vocab):  # transformers 4 took vocab_file=, 5 takes vocab=
        raise RuntimeError(f"the tiny tokenizer has {len(tokenizer)} tokens, expected {len(vocab)}")
    tokenizer.save_pretrained(str(folder))
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden_size,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(str(folder), safe_serialization=True)
    return folder


@pytest.fixture(scope="session")
def tiny_bert_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder of the tiny random BERT (HF layout, no sentence-transformers files)."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture()
def tiny_encoder(tiny_bert_path: Path) -> TermEncoder:
    """A fresh encoder over the tiny BERT (mean pooling, CPU)."""
    return TermEncoder.load(tiny_bert_path, pooling=Pooling.MEAN, device="cpu")


TINY_CONCEPTS = {
    "T:0001": (
        "myocardial infarction",
        ["heart attack", "MI", "infarto de miocardio", "cardiac infarction"],
    ),
    "T:0002": ("hypertension", ["high blood pressure", "HTN", "arterial hypertension"]),
    "T:0003": ("diabetes mellitus", ["diabetes", "DM", "sugar diabetes"]),
    "T:0004": ("asthma", ["bronchial asthma", "asthmatic disease"]),
    "T:0005": ("migraine", ["migraine headache", "sick headache"]),
    "T:0006": ("pneumonia", ["lung infection", "pneumonitis"]),
    "T:0007": ("anemia", ["anaemia", "low hemoglobin"]),
    "T:0008": ("heart disease", ["cardiac disease", "cardiopathy"]),
    "T:0009": ("lung disease", ["pulmonary disease", "respiratory disease"]),
    "T:0010": ("thyroidectomy", ["甲状腺肿物切除术", "thyroid removal"]),
}
TINY_RELATIONS = [
    ("T:0001", "isa", "T:0008"),
    ("T:0004", "isa", "T:0009"),
    ("T:0006", "isa", "T:0009"),
    ("T:0002", "risk_factor_of", "T:0001"),
    ("T:0003", "risk_factor_of", "T:0008"),
]


def make_tiny_kg() -> KnowledgeGraph:
    """10 concepts, 35 terms, 5 relations; concepts 1-9 typed by organ system."""
    types = {
        "T:0001": "cardio",
        "T:0002": "cardio",
        "T:0008": "cardio",
        "T:0004": "lung",
        "T:0006": "lung",
        "T:0009": "lung",
    }
    concepts, terms = [], []
    for cid, (name, syns) in TINY_CONCEPTS.items():
        concepts.append(
            {
                "concept_id": cid,
                "name": name,
                "semantic_types": [types.get(cid, "other")],
                "alt_ids": [],
            }
        )
        terms.append(
            {"concept_id": cid, "term": name, "lang": "en", "source": "tiny", "is_preferred": True}
        )
        for s in syns:
            lang = "zh" if any(ord(ch) > 0x2E80 for ch in s) else "en"
            terms.append(
                {
                    "concept_id": cid,
                    "term": s,
                    "lang": lang,
                    "source": "tiny",
                    "is_preferred": False,
                }
            )
    relations = [{"head": h, "relation": r, "tail": t} for h, r, t in TINY_RELATIONS]
    return KnowledgeGraph.from_records(concepts, terms, relations)


def exact_index_of(
    folder: Path,
    bert: Path,
    concepts: list[dict[str, Any]],
    terms: list[dict[str, Any]],
    source: str = "fixture",
) -> Path:
    """An exact index (mean pooling) under ``folder`` of the KG of these concept and term
    records (no relations), encoded by ``bert``; its card names ``source`` as the KG's one
    source format."""
    from termnorm import api

    kg_dir = KnowledgeGraph.from_records(concepts, terms, []).save(
        folder / "kg", card={"sources": [{"format": source}]}
    )
    built = api.build_index(
        kg_dir, bert, pooling="mean", backend="exact", out=folder / "idx", show_progress=False
    )
    assert built.path is not None
    return built.path


@pytest.fixture()
def tiny_kg() -> KnowledgeGraph:
    """The in-memory tiny KG (see :func:`make_tiny_kg`)."""
    return make_tiny_kg()


@pytest.fixture()
def tiny_kg_dir(tmp_path: Path) -> Path:
    """The tiny KG saved as a KG folder."""
    return make_tiny_kg().save(tmp_path / "kg", card={"sources": [{"format": "fixture"}]})


@pytest.fixture()
def index_dir(tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path) -> Path:
    """An exact index of the tiny KG and BERT (mean pooling)."""
    from termnorm import api

    built = api.build_index(
        tiny_kg_dir,
        tiny_bert_path,
        pooling="mean",
        backend="exact",
        out=tmp_path / "idx",
        show_progress=False,
    )
    assert built.path is not None
    return built.path


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray with 2 CPUs for a test module's Ray runs (each run would otherwise start
    its own); skipped without the ray extra."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield
    ray.shutdown()
