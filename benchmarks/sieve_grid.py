"""The triplet/sieve model-selection grid (Xu & Bethard 2021, table 4) on NCBI-disease and BC5CDR.

Usage (from the repo root; everything it writes goes under runs/sieve/, which git ignores)::

    python benchmarks/sieve_grid.py kg        # runs/sieve/kg: the MEDIC KG (2012 dictionary)
    termnorm train --kg runs/sieve/kg --out runs/sieve/model-o --loss triplet --train-data o ...
    termnorm train --kg runs/sieve/kg --out runs/sieve/model-od --loss triplet --train-data od \\
        --mentions ../shared/benchmarks/ncbi_disease/NCBItrainset_corpus.txt \\
        --mentions ../shared/benchmarks/bc5cdr_disease/train ...
    python benchmarks/sieve_grid.py grid --model O=runs/sieve/model-o --model OD=runs/sieve/model-od \\
        --model base=default --out docs/sieve_grid.md

``grid`` indexes MEDIC under each model (cached in runs/sieve/index-LABEL), then scores the
14 strategies on NCBI-disease devel (D = NCBI train mentions) and BC5CDR-disease dev (D =
BC5CDR train mentions), and writes the Markdown table with the paper's figures beside ours.
A model labelled ``O`` or ``OD`` is compared with the paper's Train:O / Train:OD block.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

import torch

from termnorm.encoders import TermEncoder
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.kg.build import KGFormat, SourceSpec, build_kg
from termnorm.lab.sieve_grid import GridDataset, grid_markdown, run_sieve_grid
from termnorm.mentions import read_mentions
from termnorm.mentions.synonyms import read_synonyms

NOTES = "<!-- notes: kept when the table is regenerated -->"
ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "benchmarks"
RUNS = ROOT / "runs" / "sieve"
KG_DIR = RUNS / "kg"
DATASETS = {  # name: (dev mentions, training mentions = domain synonyms D)
    "NCBI-disease devel": (
        BENCH / "ncbi_disease" / "NCBIdevelopset_corpus.txt",
        BENCH / "ncbi_disease" / "NCBItrainset_corpus.txt",
    ),
    "BC5CDR-disease dev": (BENCH / "bc5cdr_disease" / "dev", BENCH / "bc5cdr_disease" / "train"),
}


def build_medic_kg() -> Path:
    """The MEDIC KG folder (built once)."""
    if (KG_DIR / "kg.json").is_file():
        return KG_DIR
    medic = BENCH / "medic" / "medic_06Jul2012.txt"
    kg, _reports = build_kg([SourceSpec(KGFormat.MEDIC, medic, {})])
    kg.save(KG_DIR, card={"sources": [{"format": "medic", "path": str(medic)}]})
    return KG_DIR


def index_for(label: str, model: str, kg: KnowledgeGraph) -> tuple[TermIndex, TermEncoder]:
    """MEDIC indexed under ``model`` (cached per label; rebuilt when the model changed)."""
    encoder = TermEncoder.load(None if model == "default" else model)
    folder = RUNS / f"index-{label}"
    if (folder / "index.json").is_file():
        index = TermIndex.load(folder)
        if index.card["model"]["fingerprint"] == encoder.fingerprint:
            return index, encoder
    index = TermIndex.build(kg, encoder, backend="exact", kg_path=KG_DIR)
    index.save(folder)
    return TermIndex.load(folder), encoder


def training_budget(model: str) -> str:
    """Steps, batch, max length, lr and wall time of a model trained by ``termnorm train``."""
    folder = Path(model)
    cfg_file, log_file = folder / "training_config.json", folder / "train_log.jsonl"
    if model == "default" or not cfg_file.is_file():
        return "not trained (all-MiniLM-L6-v2 as shipped)"
    cfg = json.loads(cfg_file.read_text())
    records = [json.loads(x) for x in log_file.read_text().splitlines() if x.strip()]
    wall = max((r.get("elapsed_s", 0.0) for r in records), default=0.0)
    text = (
        f"Train:{cfg['train_data'].upper()}, {cfg['steps']} steps × {2 * cfg['k']} texts "
        f"(K={cfg['texts_per_concept']}), lr {cfg['lr']}, max length {cfg['max_length']}, "
        f"precision {cfg['precision']}, {wall / 60:.1f} min wall on the shared 2-core CPU"
    )
    card = (folder / "README.md").read_text() if (folder / "README.md").is_file() else ""
    sizes = dict(re.findall(r"\| sampled (\w+) \| (\d+) \|", card))
    if cfg["train_data"] == "od":
        mentions = " + ".join(Path(m).name for m in cfg.get("mentions", ()))
        text += (
            f"; D = {mentions} mentions repeated to |D|/|O| = {cfg['od_ratio']:.2f} "
            f"(|D| = {sizes.get('domain_texts', '?')}, |O| = {sizes.get('ontology_texts', '?')})"
        )
    return text


def grid(args: argparse.Namespace) -> None:
    for name, (dev, train) in DATASETS.items():
        if not dev.exists() or not train.exists():
            sys.exit(f"{name}: benchmark data not found under {BENCH}")
    kg = KnowledgeGraph.load(build_medic_kg())
    datasets = [
        GridDataset(name, read_mentions(dev), read_synonyms(train))
        for name, (dev, train) in DATASETS.items()
    ]
    models: dict[str, Any] = {}
    budgets: dict[str, str] = {}
    for spec in args.model:
        label, _, path = spec.partition("=")
        models[label] = index_for(label, path, kg)
        budgets[label] = training_budget(path)
    start = time.perf_counter()
    result = run_sieve_grid(models, datasets, threshold=args.threshold)
    took = time.perf_counter() - start
    table = grid_markdown(result, {m: m for m in models if m in ("O", "OD")})
    lines = [
        "# Triplet-trained vector space and sieve search: the model-selection grid",
        "",
        "Dev acc@1 (%) against the MEDIC 2012 dictionary; the domain synonyms D are each "
        "dataset's training mentions. *simple*: a composite mention counts when its top-1 "
        "matches any gold ID; *parts*: when every part's top-1 does (the paper's rule). Avg. "
        "rank: within each model's block, over the two datasets, parts rule. Paper columns: "
        "Xu & Bethard 2021 table 4, **PubMed-BERT** triplet networks trained on a GPU; ours "
        "are **all-MiniLM-L6-v2** trained briefly on a 2-core CPU. Sieve threshold "
        f"{args.threshold}.",
        "",
        "Command:",
        "",
        "```bash",
        "python benchmarks/sieve_grid.py grid "
        + " ".join(f"--model {m}" for m in args.model)
        + (f" --out {args.out}" if args.out else ""),
        "```",
        "",
        "Models:",
        "",
        *[f"* **{label}**: {text}" for label, text in budgets.items()],
        "",
        table,
        f"Grid run time {took / 60:.1f} min (torch {torch.__version__}, "
        f"{platform.processor() or platform.machine()}).",
    ]
    text = "\n".join(lines) + "\n"
    if args.out:
        out = Path(args.out)
        old = out.read_text(encoding="utf-8") if out.is_file() else ""
        if NOTES in old:  # hand-written notes below the marker survive a re-run
            text += "\n" + NOTES + old.split(NOTES, 1)[1]
        out.write_text(text, encoding="utf-8")
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("kg", help="build the MEDIC KG under runs/sieve/kg")
    g = sub.add_parser("grid", help="score the 14 strategies for each model")
    g.add_argument("--model", action="append", required=True, help="LABEL=MODEL_DIR|default")
    g.add_argument("--threshold", type=float, default=0.95)
    g.add_argument("--out", type=Path, default=None, help="Markdown file to write")
    g.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if getattr(args, "threads", None):
        torch.set_num_threads(args.threads)
    if args.cmd == "kg":
        print(build_medic_kg())
    else:
        grid(args)


if __name__ == "__main__":
    main()
