"""KGE folders without PyKEEN: round trip, the KG fingerprint check, refusals with advice."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _kge_fixtures import save_cluster_kg
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.kge import CARD_NAME, KGEVectors, load_kge, load_split, save_kge


def _write_params(path: Path) -> None:
    path.write_bytes(b"params")


def _save(out: Path, fingerprint: str) -> KGEVectors:
    kge = KGEVectors(
        ["C:1", "C:2", "C:3"],
        np.arange(6, dtype=np.float32).reshape(3, 2),
        ["is_a"],
        np.ones((1, 2), dtype=np.float32),
        card={"config": {"model": "transe"}, "kg": {"path": "kg", "fingerprint": fingerprint}},
    )
    triples = pd.DataFrame(
        {"head": ["C:1"], "relation": ["is_a"], "tail": ["C:2"], "part": ["train"]}
    )
    save_kge(out, kge, triples, _write_params)
    return kge


def test_round_trip(tmp_path: Path) -> None:
    saved = _save(tmp_path / "kge", "abc")
    loaded = load_kge(tmp_path / "kge")
    assert loaded.concept_ids == saved.concept_ids
    assert loaded.relation_labels == ["is_a"]
    np.testing.assert_array_equal(loaded.vectors, saved.vectors)
    np.testing.assert_array_equal(loaded.relation_vectors, saved.relation_vectors)
    assert loaded.card["kg"]["fingerprint"] == "abc"
    assert loaded.card["format_version"] == 1
    assert load_split(tmp_path / "kge")["part"].tolist() == ["train"]
    np.testing.assert_allclose(
        loaded.similarity(["C:1"], ["C:1"]), saved.similarity(["C:1"], ["C:1"])
    )


def test_a_failed_write_leaves_the_old_folder(tmp_path: Path) -> None:
    _save(tmp_path / "kge", "old")

    def broken(path: Path) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        save_kge(
            tmp_path / "kge",
            load_kge(tmp_path / "kge"),
            pd.DataFrame(columns=["head", "relation", "tail", "part"]),
            broken,
        )
    assert load_kge(tmp_path / "kge").card["kg"]["fingerprint"] == "old"


def test_the_kg_it_was_trained_on_is_accepted_another_is_refused(tmp_path: Path) -> None:
    kg = KnowledgeGraph.load(save_cluster_kg(tmp_path / "kg"))
    _save(tmp_path / "kge", kg.fingerprint)
    assert load_kge(tmp_path / "kge", kg).concept_ids == ["C:1", "C:2", "C:3"]
    other = KnowledgeGraph.load(save_cluster_kg(tmp_path / "kg2", seed=1))
    with pytest.raises(ArtifactMismatchError, match=r"fingerprint .*retrain: termnorm kge train"):
        load_kge(tmp_path / "kge", other)
    with pytest.raises(ArtifactMismatchError, match="none \\(unsaved\\)"):
        load_kge(tmp_path / "kge", KnowledgeGraph(kg.concepts, kg.terms, kg.relations))


def test_not_a_kge_folder_or_another_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArtifactMismatchError, match=r"not a termnorm KGE folder.*kge train"):
        load_kge(tmp_path)
    _save(tmp_path / "kge", "abc")
    card_path = tmp_path / "kge" / CARD_NAME
    card = json.loads(card_path.read_text())
    card["format_version"] = 99
    card_path.write_text(json.dumps(card))
    with pytest.raises(ArtifactMismatchError, match=r"KGE format 99.*retrain"):
        load_kge(tmp_path / "kge")
