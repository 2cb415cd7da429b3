"""``--train-data od`` for CODER's losses: training mentions join the KG's terms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import TINY_TRAIN_ARGS, run_main
from termnorm.kg import KnowledgeGraph
from termnorm.training import KGSampler
from termnorm.training.domain_terms import DOMAIN_SOURCE, add_domain_terms

_MENTIONS = [("heart attacks", ("T:0001",)), ("high bp", ("T:0002",)), ("raised bp", ("T:0002",))]


def test_mentions_become_terms_of_their_concept(tiny_kg: KnowledgeGraph) -> None:
    mentions = [
        ("heart attacks", ("T:0001",)),
        ("Heart Attack", ("T:0001",)),  # the concept has this text already (case-insensitive)
        ("high bp", ("0002",)),  # matched through id_key
        ("high bp", ("T:0002",)),  # a repeat adds nothing
        ("asthma and pneumonia", ("T:0004", "T:0006")),  # composite
        ("unknown", ("X:1",)),
        ("nothing", ("-1",)),
    ]
    out = add_domain_terms(tiny_kg, mentions)
    added = out.terms[out.terms["source"] == DOMAIN_SOURCE]
    assert list(zip(added["concept_id"], added["term"], strict=True)) == [
        ("T:0001", "heart attacks"),
        ("T:0002", "high bp"),
    ]
    assert set(added["lang"]) == {"en"} and not added["is_preferred"].any()
    assert len(out.terms) == len(tiny_kg.terms) + 2
    assert out.terms.dtypes.equals(tiny_kg.terms.dtypes)
    assert DOMAIN_SOURCE not in set(tiny_kg.terms["source"])  # the input KG is untouched
    report = out.card["domain_terms"]
    assert report["mentions_used"] == 4 and report["terms_added"] == 2
    assert report["concepts_with_domain_terms"] == 2
    assert report["mentions_dropped"] == {
        "composite": 1,
        "concept not in KG": 1,
        "unlinkable": 1,
    }
    assert out.relations.equals(tiny_kg.relations) and out.concepts.equals(tiny_kg.concepts)


def test_no_usable_mention_fails_with_the_reasons(tiny_kg: KnowledgeGraph) -> None:
    with pytest.raises(ValueError, match=r"no usable training mention.*composite"):
        add_domain_terms(tiny_kg, [("a and b", ("T:0001", "T:0002"))])


def test_domain_groups_pair_mentions_with_kg_terms(tiny_kg: KnowledgeGraph) -> None:
    kg = add_domain_terms(tiny_kg, _MENTIONS)
    k, m = 16, 2  # 8 groups, all synonym-only; half of them domain groups
    sampler = KGSampler(kg, k=k, m=m, synonym_share=1.0, seed=1, domain_share=0.5)
    assert sampler.stats()["domain_terms"] == 3 and sampler.stats()["domain_concepts"] == 2
    mentions = {t for t, _ in _MENTIONS}
    terms_of = kg.terms_by_concept()
    for step in range(6):
        b = sampler.batch(step)
        heads, tails = b.terms[:k], b.terms[k:]
        concepts = sampler.describe(b.labels.tolist())
        for i in range(k // 2, k):  # the last 4 groups: mention head, KG-term tail, one concept
            assert heads[i] in mentions and tails[i] not in mentions
            assert concepts[i] == concepts[k + i] and heads[i] in terms_of[concepts[i]]
            assert tails[i] in terms_of[concepts[i]]
    plain = KGSampler(kg, k=k, m=m, synonym_share=1.0, seed=1)
    assert plain.domain_share == 0.0


def test_domain_share_without_domain_terms_fails(tiny_kg: KnowledgeGraph) -> None:
    with pytest.raises(ValueError, match="--train-data od"):
        KGSampler(tiny_kg, k=8, m=2, domain_share=0.25)


def test_train_ms_od_from_the_cli(
    tiny_bert_path: Path, tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mentions = tmp_path / "train.tsv"
    mentions.write_text("0001\theart attacks\n0002\thigh bp\n0004|0009\tasthma\n")
    out = tmp_path / "model"
    common = ["--kg", str(tiny_kg_dir), "--base-model", str(tiny_bert_path), "--steps", "2"]
    common += [*TINY_TRAIN_ARGS, "--loss", "ms"]
    args = ["train", *common, "--out", str(out), "--train-data", "od", "--mentions", str(mentions)]
    code, stdout, _ = run_main(args, capsys)
    assert code == 0 and json.loads(stdout)["steps"] == 2
    card = (out / "README.md").read_text()
    assert "| domain terms_added | 2 |" in card
    assert "| sampled terms | 36 |" in card  # the tiny KG's 34 terms + 2 domain terms
    config = json.loads((out / "training_config.json").read_text())
    assert config["train_data"] == "od" and config["mentions"] == [str(mentions)]

    args = ["train", *common, "--out", str(tmp_path / "m2"), "--mentions", str(mentions)]
    code, _, stderr = run_main(args, capsys)
    assert code != 0 and "--train-data od" in stderr
    args = ["train", *common, "--out", str(tmp_path / "m3"), "--train-data", "od"]
    code, _, stderr = run_main(args, capsys)
    assert code != 0 and "--mentions FILE" in stderr
