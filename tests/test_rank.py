"""The ranking stage: keyword vocabularies, the keyword attention mask, the cross-encoder,
fusion (paper §3.3), multi-code selection (formula 14), cross-fitted training candidates."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from _search_fakes import DictEncoder, build_index, unit
from termnorm.errors import InputFormatError
from termnorm.kg import KnowledgeGraph
from termnorm.kg.keyword_mining import mine_chinese_procedure_keywords, mine_english_keywords
from termnorm.kg.keywords import KeywordVocabulary, builtin_keywords_path, read_keywords
from termnorm.search.candidate import Candidate
from termnorm.search.domain import SearchSpace
from termnorm.search.stages.crossfit import Query, TrainingData, TrainingDataSpec, recall_candidates
from termnorm.search.stages.ranker.cross_encoder import KeywordCrossEncoder
from termnorm.search.stages.ranker.fusion import (
    distances,
    fuse,
    recall_similarities,
    select_codes,
)
from termnorm.search.stages.ranker.keyword_mask import (
    PS_POSITION,
    PT_POSITION,
    encode_pairs,
    keyword_attention_mask,
)
from termnorm.search.stages.ranker.texts import candidate_text

VOCAB = KeywordVocabulary(
    frozenset({"kidney", "breast", "lower limb", "甲状腺"}),
    frozenset({"cancer", "disease", "切除术"}),
    "en",
)


# ----------------------------------------------------------------------------- keywords
def test_spans_match_words_plurals_phrases_and_chinese_substrings() -> None:
    assert VOCAB.spans("Kidneys disease of the lower-limb") == [
        (0, 7, "site"),
        (8, 15, "type"),
        (23, 33, "site"),
    ]
    assert VOCAB.spans("breastfeeding") == []  # whole words only
    assert VOCAB.spans("右侧甲状腺肿瘤切除术") == [(2, 5, "site"), (7, 10, "type")]


def test_keyword_file_round_trip_and_errors(tmp_path: Path) -> None:
    path = VOCAB.save(tmp_path / "kw.tsv", comments=["test"])
    again = read_keywords(path)
    assert (again.sites, again.types, again.lang) == (VOCAB.sites, VOCAB.types, "en")
    bad = tmp_path / "bad.tsv"
    bad.write_text("keyword\tkind\nkidney\torgan\n")
    with pytest.raises(InputFormatError, match=r"bad.tsv:2: unknown kind"):
        read_keywords(bad)
    bad.write_text("kidney\tsite\n")
    with pytest.raises(InputFormatError, match="expected the header"):
        read_keywords(bad)
    with pytest.raises(ValueError, match="both a site and a type"):
        KeywordVocabulary(frozenset({"cancer"}), frozenset({"Cancer"}), "en")


@pytest.mark.parametrize(
    ("lang", "site", "kind"), [("en", "kidney", "type"), ("zh", "甲状腺", "type")]
)
def test_shipped_vocabularies_load(lang: str, site: str, kind: str) -> None:
    vocabulary = read_keywords(builtin_keywords_path(lang))
    assert vocabulary.lang == lang and vocabulary.kind(site) is not None
    assert vocabulary.kind(site).value == "site"  # type: ignore[union-attr]
    assert len(vocabulary.types) > 20 and len(vocabulary.sites) > 50


# ----------------------------------------------------------------------------- the mask
def test_keyword_mask_rows() -> None:
    attention = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])  # last token is padding
    site = torch.tensor([[0, 0, 0, 1, 0, 0, 0]], dtype=torch.bool)
    kind = torch.tensor([[0, 0, 0, 0, 1, 1, 0]], dtype=torch.bool)
    mask = keyword_attention_mask(attention, site, kind)
    assert mask.shape == (1, 1, 7, 7)
    allowed = mask[0, 0] == 0
    assert allowed[PS_POSITION].nonzero().flatten().tolist() == [PS_POSITION, 3]
    assert allowed[PT_POSITION].nonzero().flatten().tolist() == [PT_POSITION, 4, 5]
    for row in (0, 3, 4, 5, 6):  # every other row: all real tokens, as plain BERT
        assert allowed[row].tolist() == [True] * 6 + [False]


def test_pairs_flag_keyword_tokens_of_both_texts(tiny_bert_path: Path) -> None:
    model = KeywordCrossEncoder.from_pretrained(tiny_bert_path, VOCAB)
    batch = encode_pairs(model.tokenizer, ["kidney x"], ["a cancer"], 64, VOCAB)
    tokens = model.tokenizer.convert_ids_to_tokens(batch["input_ids"][0])
    assert tokens[:3] == ["[CLS]", "[PS]", "[PT]"]
    sites = [t for t, f in zip(tokens, batch["site"][0], strict=True) if f]
    types = [t for t, f in zip(tokens, batch["type"][0], strict=True) if f]
    assert "".join(sites).replace("##", "") == "kidney"
    assert "".join(types).replace("##", "") == "cancer"


def test_ps_and_pt_attend_exactly_their_keywords_inside_bert(tiny_bert_path: Path) -> None:
    model = KeywordCrossEncoder.from_pretrained(tiny_bert_path, VOCAB)
    model.model.config._attn_implementation = "eager"
    batch = model.tokenize(["kidney disease", "breast"], ["cancer", "kidney"])
    mask = keyword_attention_mask(batch["attention_mask"], batch["site"], batch["type"])
    out = model.model(
        input_ids=batch["input_ids"],
        token_type_ids=batch["token_type_ids"],
        attention_mask=mask,
        output_attentions=True,
    )
    for layer in out.attentions:  # [B, heads, T, T]
        for b in range(2):
            ps = layer[b, :, PS_POSITION].sum(0) > 0
            pt = layer[b, :, PT_POSITION].sum(0) > 0
            expect_ps = batch["site"][b].clone()
            expect_ps[PS_POSITION] = True
            expect_pt = batch["type"][b].clone()
            expect_pt[PT_POSITION] = True
            assert ps.tolist() == expect_ps.tolist()
            assert pt.tolist() == expect_pt.tolist()
            real = batch["attention_mask"][b].bool()
            assert ((layer[b, :, 0] > 0) == real).all()  # [CLS] as usual


def test_cross_encoder_round_trip(tiny_bert_path: Path, tmp_path: Path) -> None:
    model = KeywordCrossEncoder.from_pretrained(tiny_bert_path, VOCAB, max_length=32)
    before = model.predict(["kidney cancer", "x"], ["renal cancer", "y"])
    model.save(tmp_path / "m")
    again = KeywordCrossEncoder.load(tmp_path / "m", VOCAB)
    assert torch.allclose(before, again.predict(["kidney cancer", "x"], ["renal cancer", "y"]))
    plain = KeywordCrossEncoder.from_pretrained(tiny_bert_path, plain=True)
    tokens = plain.tokenizer.convert_ids_to_tokens(plain.tokenize(["a"], ["b"])["input_ids"][0])
    assert tokens == ["[CLS]", "a", "[SEP]", "b", "[SEP]"]


# ----------------------------------------------------------------------------- fusion
def test_fusion_formula_on_hand_made_scores() -> None:
    cosines = np.array([1.0, 0.5, -1.0])
    d = distances(cosines)
    assert d.tolist() == pytest.approx([0.0, 1.0, 2.0])
    sc = recall_similarities(cosines)
    assert sc.tolist() == pytest.approx([1.0, 1 - 1 / 3, 1 - 2 / 3])
    s = fuse(cosines, [0.2, 0.9, 0.4])
    assert s.tolist() == pytest.approx([(1 + 0.2) / 2, (2 / 3 + 0.9) / 2, (1 / 3 + 0.4) / 2])
    weighted = fuse(cosines, [0.2, 0.9, 0.4], weight=0.25)
    assert weighted[1] == pytest.approx(0.25 * 2 / 3 + 0.75 * 0.9)
    assert recall_similarities([1.0, 1.0]).tolist() == [1.0, 1.0]  # Σd = 0
    assert math.isclose(distances([0.0])[0], math.sqrt(2))
    with pytest.raises(ValueError, match="fusion weight"):
        fuse(cosines, [0, 0, 0], weight=1.5)


@pytest.mark.parametrize(
    ("scores", "x", "expected"),
    [
        ([0.9, 0.85, 0.82, 0.81, 0.5], 1, 1),
        ([0.9, 0.85, 0.82, 0.81, 0.5], 2, 2),
        ([0.9, 0.85, 0.82, 0.81, 0.5], 3, 4),  # top 3 + the one above θ = 0.8
        ([0.9, 0.4, 0.3, 0.2], 3, 3),  # top 3 even below θ
        ([0.9, 0.85, 0.82, 0.81, 0.805], 3, 5),
        ([0.9], 3, 1),
        ([0.9, 0.8], 7, 2),  # clipped to 3, at most the candidates
    ],
)
def test_multi_code_selection_formula_14(scores: list[float], x: int, expected: int) -> None:
    assert select_codes(scores, x, theta=0.8) == expected


def test_candidate_text_pairs_synonym_and_name() -> None:
    c = Candidate("X:1", "Myocardial Infarction", 0.9, "heart attack", 1)
    assert candidate_text(c) == "heart attack; Myocardial Infarction"
    assert candidate_text(c._replace(matched_term="myocardial infarction")) == (
        "Myocardial Infarction"
    )


# ----------------------------------------------------------------------------- cross-fitting
def test_cross_fitting_never_finds_the_mentions_own_entry() -> None:
    table = {
        "alpha": unit(1, 0, 0),
        "beta": unit(0, 1, 0),
        "gamma": unit(0, 0, 1),
        "q own": unit(0.1, 0.1, 1),  # near gamma, but annotated as X:1 in its own document
        "q other": unit(1, 0.05, 0),
    }
    encoder = DictEncoder(table)
    index = build_index(
        [("X:1", "alpha", [], []), ("X:2", "beta", [], []), ("X:3", "gamma", [], [])],
        [("X:1", "alpha"), ("X:2", "beta"), ("X:3", "gamma")],
        encoder,
    )
    space = SearchSpace(index, encoder)
    queries = [Query("q own", ("X:1",), "doc1"), Query("q other", ("X:1",), "doc2")]
    crossfit = [("doc1", ("q own", ("X:1",))), ("doc2", ("q other", ("X:1",)))]
    spec = TrainingDataSpec(strategy="d-t+od-t", k_c=2, folds=2)
    lists = recall_candidates(spec, space, queries, TrainingData(queries, [], crossfit, [], []))
    own = lists[0]
    assert own[0].concept_id == "X:3"  # its own entry (an exact hit for X:1) is not there
    assert all(c.matched_term != "q own" for c in own)
    # without cross-fitting the mention finds itself first
    everything = space.with_synonyms([p for _d, p in crossfit])[0]
    from termnorm.search.space_matcher import build_strategy

    leaked = build_strategy(everything, "d-t+od-t").normalize("q own", k=1)[0]
    assert (leaked.concept_id, leaked.matched_term) == ("X:1", "q own")


# ----------------------------------------------------------------------------- mining
def _kg(names: list[str], lang: str = "en", types: tuple[str, ...] = ()) -> KnowledgeGraph:
    concepts = [
        {"concept_id": f"X:{i}", "name": n, "semantic_types": list(types), "alt_ids": []}
        for i, n in enumerate(names)
    ]
    terms = [
        {"concept_id": f"X:{i}", "term": n, "lang": lang, "source": "S", "is_preferred": True}
        for i, n in enumerate(names)
    ]
    return KnowledgeGraph.from_records(concepts, terms, [])


def test_english_mining_takes_sites_from_hpo_patterns_and_types_from_head_words() -> None:
    hpo = _kg(
        [
            "Abnormality of the kidney",
            "Abnormal renal morphology",
            "Abnormality of the lower limb",
            "Abnormal liver physiology",
            "Abnormality of the ocular abduction movement",
        ],
        types=("Abnormality of the cardiovascular system",),
    )
    medic = _kg(
        [f"Carcinoma, Type {i}" for i in range(8)]
        + [f"Kidney Neoplasm{i % 2}" for i in range(3)]
        + [f"X{i} Syndrome" for i in range(9)]
    )
    v = mine_english_keywords([hpo, medic])
    assert {"kidney", "renal", "lower limb", "liver", "cardiovascular system"} <= v.sites
    assert "ocular abduction movement" not in v.sites  # a function, not a site
    assert {"carcinoma", "syndrome"} <= v.types and "type" not in v.types


def test_chinese_mining_finds_procedure_types_and_sites() -> None:
    organs = [
        "甲状腺",
        "胆囊",
        "阑尾",
        "肾上腺",
        "乳房",
        "膀胱",
        "卵巢",
        "睾丸",
        "扁桃体",
        "前列腺",
    ]
    kinds = ("切除术", "活组织检查", "修补术", "造口术", "引流术", "缝合术")
    names = [f"{o}{t}" for o in organs for t in kinds]
    v = mine_chinese_procedure_keywords(_kg(names, "zh"))
    assert {"切除术", "活组织检查", "缝合术"} <= v.types
    assert {"甲状腺", "胆囊", "前列腺"} <= v.sites
    assert "除术" not in v.types  # always preceded by 切: not a word boundary


# ----------------------------------------------------------------------------- implication
def test_index_implication_finds_the_recall_models_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from termnorm.errors import ArtifactMismatchError
    from termnorm.search.stages.ranker import implication as module

    seen: list[Path] = []
    monkeypatch.setattr(module, "load_implication", lambda path: seen.append(path) or "p")
    model = tmp_path / "model"
    (model / module.HEAD_DIR).mkdir(parents=True)
    (model / module.HEAD_DIR / "config.json").write_text("{}")
    index = SimpleNamespace(card={"model": {"path": str(model)}})
    assert module.index_implication(index, tmp_path / "other") == "p"  # type: ignore[arg-type]
    assert seen == [model]  # the recall model's own head comes first
    bare = SimpleNamespace(card={"model": {"path": str(tmp_path)}})
    assert module.index_implication(bare, tmp_path / "other") == "p"  # type: ignore[arg-type]
    assert seen[-1] == tmp_path / "other"
    with pytest.raises(ArtifactMismatchError, match="--implication MODEL"):
        module.index_implication(None, None)
