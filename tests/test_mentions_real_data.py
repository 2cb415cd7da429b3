"""Mention readers and lexical baselines on the real dev files in ../shared/benchmarks (slow).

The expected counts are the ones the datasets' READMEs state (NCBI devel 787, GSC+ dev 173,
PhenoBERT val 569, CADEC fold test 504 with 181 targets, PsyTAR fold test 588 with 167).
"""

from __future__ import annotations

from collections import Counter

import pytest

from conftest import require_benchmarks
from termnorm.evaluation.normalization import NormalizationEvaluator
from termnorm.mentions import (
    MentionFormat,
    MentionKind,
    detect_format,
    read_mentions,
    read_targets,
)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("parts", "fmt", "n"),
    [
        (("ncbi_disease", "NCBIdevelopset_corpus.txt"), MentionFormat.PUBTATOR, 787),
        (("ncbi_disease", "NCBItrainset_corpus.txt"), MentionFormat.PUBTATOR, 5145),
        (("hpo_gscplus", "GSCplus_dev_gold.tsv"), MentionFormat.GSCPLUS, 173),
        (("hpo_phenobert", "val"), MentionFormat.PHENOBERT, 569),
        (("cadec", "CADEC_0"), MentionFormat.TSV, 504),
        (("psytar", "fold_1"), MentionFormat.TSV, 588),
    ],
)
def test_counts_and_detected_format(parts: tuple[str, ...], fmt: MentionFormat, n: int) -> None:
    path = require_benchmarks(*parts)
    assert detect_format(path) is fmt
    mentions = read_mentions(path)
    assert len(mentions) == n
    assert all(m.text and m.gold_ids for m in mentions)


def test_ncbi_devel_composites() -> None:
    mentions = read_mentions(require_benchmarks("ncbi_disease", "NCBIdevelopset_corpus.txt"))
    kinds = Counter(m.kind for m in mentions)
    assert kinds[MentionKind.COMPOSITE] == 30  # 30 id fields with '|' or '+'
    assert kinds[MentionKind.UNLINKABLE] == 0


def test_bc5cdr_dev_has_unlinkable_and_composite_mentions() -> None:
    path = require_benchmarks("bc5cdr_disease", "dev")
    mentions = read_mentions(path)
    assert detect_format(path) is MentionFormat.BIOSYN
    assert len({m.doc_id for m in mentions}) == 500
    kinds = Counter(m.kind for m in mentions)
    assert kinds[MentionKind.UNLINKABLE] > 0 and kinds[MentionKind.COMPOSITE] > 0


def test_fold_targets() -> None:
    assert len(read_targets(require_benchmarks("cadec", "CADEC_0"))) == 181
    assert len(read_targets(require_benchmarks("psytar", "fold_1"))) == 167


def test_lexical_baselines_on_ncbi_devel_against_medic() -> None:
    from termnorm.kg.build import KGFormat, SourceSpec, build_kg
    from termnorm.search.lexical import ExactMatcher, TfidfMatcher

    medic = require_benchmarks("medic", "medic_06Jul2012.txt")
    mentions = read_mentions(require_benchmarks("ncbi_disease", "NCBIdevelopset_corpus.txt"))
    kg, _ = build_kg([SourceSpec(KGFormat.MEDIC, medic, {})])
    evaluator = NormalizationEvaluator(mentions)
    exact, tfidf = evaluator(ExactMatcher(kg)), evaluator(TfidfMatcher(kg))
    for metrics in (exact, tfidf):
        accs = [metrics[f"normalize_acc@{k}"] for k in (1, 3, 5, 10)]
        assert accs == sorted(accs) and accs[0] > 0.0
        assert metrics["normalize_n"] == 787
    # character n-grams forgive what exact match cannot (plurals, word order, typos)
    assert tfidf["normalize_acc@5"] > exact["normalize_acc@5"]
