"""Prototype batches: shapes, positives that prefer other synonyms, negatives never of the
prototype's concept (random and faiss-mined), the refusals, and a tiny end-to-end MS v3 run
with contextual mentions."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from _cli import run_main
from _context_fixtures import write_corpus
from _kge_fixtures import save_cluster_kg
from termnorm.encoders import TermEncoder
from termnorm.training import PrototypeSource, TrainConfig

# concept A: three surface forms (one twice); B, C, D: two each
TEXTS = ["a one", "a two", "a three", "a one again", "b one", "b two", "c one", "c two"]
TEXTS += ["d one", "d two"]
CONCEPTS = ["A", "A", "A", "A", "B", "B", "C", "C", "D", "D"]
KEYS = ["a1", "a2", "a3", "a1", "b1", "b2", "c1", "c2", "d1", "d2"]


def source(**kw: int) -> PrototypeSource:
    args = dict(prototypes=3, positives=4, negatives=3, per_concept=3, seed=0)
    args.update(kw)
    return PrototypeSource(TEXTS, CONCEPTS, KEYS, **args)  # type: ignore[arg-type]


def test_batch_shape_and_labels() -> None:
    src = source()
    batch = src.batch(0)
    per = 1 + 4 + 3
    assert len(batch.terms) == 3 * per and batch.labels.shape == (3 * per,)
    protos = [batch.labels[i * per].item() for i in range(3)]
    assert len(set(protos)) == 3  # three different concepts
    for i, c in enumerate(protos):
        block = batch.labels[i * per : (i + 1) * per].tolist()
        assert block[1:5] == [c] * 4  # positives: the prototype's concept
        assert c not in block[5:]  # negatives: never the prototype's concept
    assert batch.terms == src.batch(0).terms  # counter-based
    assert batch.terms != src.batch(1).terms


def test_prototypes_take_a_new_synonym_each_first_and_positives_prefer_other_synonyms() -> None:
    src = source(per_concept=3)
    a = src.concept_ids.index("A")
    keys = [src.keys[src.proto_text[p]] for p in src.proto_of_concept[a]]
    assert sorted(keys) == ["a1", "a2", "a3"]  # 3 prototypes, 3 different synonyms
    rng = np.random.default_rng(0)
    first = int(np.flatnonzero(src.texts == "a one")[0])
    positives = src._positives(rng, first)
    assert {str(src.keys[i]) for i in positives[:2]} == {"a2", "a3"}  # other synonyms first
    assert str(src.keys[positives[2]]) == "a1"  # then the same synonym's other text
    assert first not in positives


def test_faiss_negatives_are_the_nearest_texts_of_other_concepts() -> None:
    pytest.importorskip("faiss")
    src = source(negatives=2)
    # one-hot-ish vectors: every text of A lies close to the texts of B, far from C and D
    place = {"A": [1.0, 0.0, 0.0], "B": [0.9, 0.1, 0.0], "C": [0.0, 1.0, 0.0], "D": [0, 0, 1.0]}
    vectors = np.array([place[src.concept_ids[c]] for c in src.labels], dtype=np.float32)
    vectors += np.random.default_rng(0).normal(0, 0.01, vectors.shape).astype(np.float32)
    src.refresh(lambda texts: vectors)
    assert src.neighbours is not None and src.neighbours.shape[0] == len(src.proto_text)
    for p in range(len(src.proto_text)):
        concept = int(src.labels[src.proto_text[p]])
        negatives = src._negatives(np.random.default_rng(0), p, concept)
        assert concept not in src.labels[negatives]
        if src.concept_ids[concept] == "A":
            assert {src.concept_ids[c] for c in src.labels[negatives]} == {"B"}
    for step in range(5):
        batch = src.batch(step)
        per = 1 + src.k + src.m
        for i in range(src.p):
            block = batch.labels[i * per : (i + 1) * per].tolist()
            assert block[0] not in block[1 + src.k :]


def test_refresh_every_epoch_by_default() -> None:
    src = source()
    assert src.refresh_every == math.ceil(len(src.proto_text) / 3)
    assert source(prototypes=2).refresh_every == math.ceil(len(src.proto_text) / 2)


def test_too_few_concepts_and_bad_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="need 5 concepts with at least two texts"):
        source(prototypes=5)
    with pytest.raises(ValueError, match="--batches prototype serves --loss ms, ms-v2, ms-v3"):
        TrainConfig(out=tmp_path, loss="coder", batches="prototype").validate()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="--corpus is read by --batches prototype"):
        TrainConfig(out=tmp_path, corpus=("c.txt",)).validate()
    with pytest.raises(ValueError, match=r"need --max-length >= 32"):
        TrainConfig(out=tmp_path, batches="prototype", corpus=("c.txt",), max_length=24).validate()  # type: ignore[arg-type]


def test_prototype_batches_with_contexts_ms_v3_end_to_end(
    tiny_bert_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pykeen")
    pytest.importorskip("faiss")
    kg_dir = save_cluster_kg(tmp_path / "kg")
    corpus = write_corpus(tmp_path)
    kge = tmp_path / "kge"
    args = ["kge", "train", "--kg", str(kg_dir), "--model", "transe", "--dim", "8"]
    code, _, err = run_main([*args, "--epochs", "1", "--no-mcsm", "--out", str(kge)], capsys)
    assert code == 0, err
    out = tmp_path / "model"
    args = ["train", "--kg", str(kg_dir), "--loss", "ms-v3", "--kge", str(kge)]
    args += ["--batches", "prototype", "--prototypes", "3", "--prototype-positives", "2"]
    args += ["--prototype-negatives", "3", "--prototype-refresh", "2"]
    args += ["--corpus", str(corpus), "--corpus-format", "text", "--context-words", "2"]
    args += ["--base-model", str(tiny_bert_path), "--out", str(out), "--steps", "3"]
    args += ["--warmup", "1", "--log-every", "1", "--max-length", "48", "--precision", "fp32"]
    args += ["--device", "cpu", "--no-freeze-embeddings", "--freeze-layers", "0"]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    records = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in records if "loss" in r]
    assert len(losses) == 3 and all(math.isfinite(v) for v in losses)
    objective = json.loads((out / "objective.json").read_text())
    assert objective["pairs_with_kge_margin"] == 3 * 18 * 17  # 3 steps, 3 × (1 + 2 + 3) texts
    card = (out / "README.md").read_text()
    assert re.search(r"\| sampled contexts \| [1-9]", card)  # the corpus matches joined
    assert re.search(r"\| sampled prototypes \| [1-9]", card)
    encoder = TermEncoder.load(out, device="cpu")  # a normal encoder folder, markers included
    assert encoder.markers is not None
    assert encoder.encode(["cardio disorder 3"]).shape == (1, 32)


def test_nearest_texts_matches_exact_cosine_search() -> None:
    pytest.importorskip("faiss")
    from termnorm.training import nearest_texts

    rng = np.random.default_rng(3)
    base = rng.normal(size=(50, 6)).astype(np.float32) * rng.uniform(0.5, 3, (50, 1))
    queries = base[[4, 9, 20]]
    found = nearest_texts(base, queries, 5)
    unit = base / np.linalg.norm(base, axis=1, keepdims=True)
    exact = np.argsort(-(unit[[4, 9, 20]] @ unit.T), axis=1)[:, :5]
    assert np.array_equal(found, exact) and list(found[:, 0]) == [4, 9, 20]
    padded = nearest_texts(base[:3], queries, 5)
    assert padded.shape == (3, 5) and (padded[:, 3:] == -1).all()
