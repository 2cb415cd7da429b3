"""What the base encoder does with Chinese procedure names (issue 24's Chinese part).

Usage: ``python benchmarks/chinese_procedures.py KG [--model M]`` where KG is
``termnorm kg build --format icd9procs --lang zh,en --out KG``. Prints zh name → English names
acc@1/@5 over all codes (exact cosine search), the share of ``[UNK]`` WordPiece tokens in the
zh names, and how many zh names the shipped Chinese keyword vocabulary finds a site and a
type keyword in.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kg", type=Path, help="an icd9procs KG folder with zh and en names")
    parser.add_argument("--model", type=Path, default=None, help="model folder (default MiniLM)")
    args = parser.parse_args()

    import torch

    from termnorm.encoders import TermEncoder
    from termnorm.kg import KnowledgeGraph
    from termnorm.kg.keywords import builtin_keywords_path, read_keywords

    torch.set_num_threads(1)
    terms = KnowledgeGraph.load(args.kg).terms
    en = terms[terms.lang == "en"].drop_duplicates("concept_id")
    zh = terms[terms.lang == "zh"].drop_duplicates("concept_id")
    encoder = TermEncoder.load(args.model)
    scores = encoder.encode(zh.term.tolist()) @ encoder.encode(en.term.tolist()).T
    top = np.argsort(-scores, axis=1)[:, :5]
    ids, gold = en.concept_id.to_numpy(), zh.concept_id.to_numpy()
    acc1 = float(np.mean(ids[top[:, 0]] == gold))
    acc5 = float(np.mean([g in ids[row] for g, row in zip(gold, top, strict=True)]))
    print(f"zh -> en acc@1 {acc1:.1%} acc@5 {acc5:.1%} over {len(gold)} codes")
    unk = encoder.tokenizer.unk_token_id
    pieces = encoder.tokenizer(zh.term.tolist())["input_ids"]
    share = float(np.mean([np.mean([t == unk for t in ids_[1:-1]]) for ids_ in pieces]))
    print(f"[UNK] share of the zh names' WordPiece tokens: {share:.1%}")
    vocabulary = read_keywords(builtin_keywords_path("zh"))
    spans = [vocabulary.spans(text) for text in zh.term]
    site = float(np.mean([any(kind == "site" for *_, kind in s) for s in spans]))
    kind_type = float(np.mean([any(kind == "type" for *_, kind in s) for s in spans]))
    print(f"zh names with a site keyword {site:.1%}, with a type keyword {kind_type:.1%}")


if __name__ == "__main__":
    main()
