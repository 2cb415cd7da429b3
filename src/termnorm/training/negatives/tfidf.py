"""TF-IDF negatives: each item's k_n wrong concepts nearest to its mention by char n-grams.

Terms and mentions become TF-IDF vectors over character 3-grams inside word boundaries
(scikit-learn ``analyzer="char_wb"``, lower-cased; idf fitted on the dictionary's terms, rows
L2-normalised — the settings of the lexical TF-IDF baseline, re-implemented here since
training sits below search). A concept scores by its best term; the negative text is that term
(the surface form that makes the concept look like the mention). The k_n nearest wrong
concepts are fixed for the whole run, as in the paper.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from termnorm.training.mtcg_data import ConceptDictionary, MtcgItem
from termnorm.training.negatives.base import first_wrong_concepts

__all__ = ["tfidf_pools"]


def tfidf_pools(
    dictionary: ConceptDictionary,
    items: Sequence[MtcgItem],
    k: int,
    ngram_range: tuple[int, int] = (3, 3),
    block: int = 256,
) -> list[list[str]]:
    """Per item, the best terms of its ``k`` TF-IDF-nearest wrong concepts, nearest first."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(
        analyzer="char_wb", ngram_range=ngram_range, lowercase=True, dtype=np.float32
    )
    terms_t = vectorizer.fit_transform(dictionary.term_texts).T.tocsr()  # [V, T]
    mentions = list(dict.fromkeys(it.mention for it in items))
    row = {m: i for i, m in enumerate(mentions)}
    take = min(len(dictionary.term_texts), 8 * k + 64)
    ranked: list[np.ndarray] = []
    for start in range(0, len(mentions), block):
        scores = (vectorizer.transform(mentions[start : start + block]) @ terms_t).toarray()
        top = np.argpartition(-scores, take - 1, axis=1)[:, :take]
        order = np.take_along_axis(scores, top, axis=1).argsort(axis=1)[:, ::-1]
        ranked.extend(np.take_along_axis(top, order, axis=1))
    return [first_wrong_concepts(dictionary, it, ranked[row[it.mention]], k) for it in items]
