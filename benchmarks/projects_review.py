"""Review effort (issue 33): annotated mentions as a code list, a simulated reviewer who knows
the gold concept, the open rows re-mapped as decisions come in; three suggesters compared.

    python benchmarks/projects_review.py --index IDX --mentions FILE[:FORMAT] [--mentions ...]
        --work DIR [--synonyms FILE ...] [--runtime onnx-int8] [--every 100]
        [--max-decisions N] [--plot docs/review_effort.png] [--json]

The code list: every distinct mention text with one gold ID (the first file's gold where the
texts of two files agree), frequency = how often the text occurs. Three arms, each a project
reviewed in its own queue order (frequency × uncertainty), ``--every`` decisions per round;
the reviewer approves the top candidate when it is the gold concept and picks the gold
concept otherwise:

* ``learning``: termnorm (``api.project_matcher`` over ``--index``, the ``--synonyms`` files)
  and, after each round, ``map run --remap``: the approved rows are domain synonyms;
* ``no learning``: the same first mapping, decisions not fed back. The search is
  deterministic and searches no decision, so re-mapping would give the same candidates: the
  rows are not re-mapped (same curve, without the cost);
* ``tf-idf``: Usagi's method — a TF-IDF suggester over the index's terms (the char 3-gram
  :class:`~termnorm.search.lexical.TfidfMatcher` over the index's KG), no learning.

After each round, per arm: accuracy@1 of the rows not yet reviewed (top candidate against
gold, as :func:`termnorm.kg.ids.id_key`), and the share of those rows that could be
auto-approved at 95 % precision. Without a ``--combiner`` the scores are similarities, so the
threshold is *estimated from the reviewed rows*: a logistic fit of "the top candidate was
right" on the top score over the rows reviewed so far (Platt scaling; at least
``--min-support`` rows, both outcomes seen) gives each open row a probability, and t is the
lowest score at which the open rows scoring ≥ t have a mean probability ≥ 95 %. (The rows
reviewed first are the uncertain ones, so the fit extrapolates to high scores; counting
precision among reviewed rows above t instead never reaches 95 % here: they all score low.)
The precision those open rows really have (against gold) is printed beside it. With
``--combiner`` (calibrated probabilities) t is 0.95 itself. Beside it, the *oracle* share:
t chosen on the open rows' gold answers (the most a perfectly calibrated score could
auto-approve at 95 % precision; an upper bound, not something a project can do).

``--reuse-mapping``: start the termnorm arms from ``WORK/mapped-termnorm.db`` (a copy of an
earlier run's first mapping of the same list and settings) instead of mapping again.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from termnorm import api
from termnorm.kg.ids import id_key
from termnorm.mentions import read_mentions
from termnorm.projects import (
    PipelineSettings,
    decide,
    init_project,
    open_store,
    review_queue,
    run_project,
)
from termnorm.projects.models import CandidateRow, SourceRow
from termnorm.projects.store import Store
from termnorm.search.candidate import RowAnswers, RowResult

TARGET = 0.95


def code_list(sources: Sequence[tuple[Path, str | None]], out: Path) -> dict[str, str]:
    """Write the code list (code, text, count) and return the gold ID per code."""
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for path, fmt in sources:
        for m in read_mentions(path, fmt):
            if len(m.gold_ids) == 1 and m.gold_ids[0] not in ("-1", ""):
                counts[m.text] += 1
                first.setdefault(m.text, m.gold_ids[0])
    gold: dict[str, str] = {}
    with out.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["code", "text", "count"])
        for i, (text, gid) in enumerate(first.items()):
            code = f"M{i:05d}"
            gold[code] = gid
            writer.writerow([code, text, counts[text]])
    return gold


def open_rows(store: Store) -> list[tuple[str, str | None, float | None]]:
    """``(code, top concept, top score)`` of every row still to review."""
    with store.session() as session:
        return [
            (str(c), cid, None if s is None else float(s))
            for c, cid, s in session.execute(
                select(SourceRow.code, CandidateRow.concept_id, CandidateRow.score)
                .outerjoin(
                    CandidateRow, (CandidateRow.row_id == SourceRow.id) & (CandidateRow.rank == 1)
                )
                .where(SourceRow.state == "to_review")
            ).all()
        ]


def lowest_at_target(scores: Sequence[float], right: Sequence[float]) -> float | None:
    """The lowest score t at which the rows scoring ≥ t are right ≥ 95 % of the time on
    average (``right``: each row's probability, or 0/1), or None."""
    import numpy as np

    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    ranked, p = np.asarray(scores, dtype=float)[order], np.asarray(right, dtype=float)[order]
    precision = np.cumsum(p) / np.arange(1, len(p) + 1)
    last = np.r_[ranked[1:] < ranked[:-1], True]  # a tie group is taken whole
    good = np.nonzero((precision >= TARGET) & last)[0]
    return float(ranked[good[-1]]) if len(good) else None


def threshold(
    reviewed: Sequence[tuple[float, bool]], open_scores: Sequence[float], min_support: int
) -> float | None:
    """The estimated threshold: each open row's probability of being right from a logistic
    fit of correctness on score over the reviewed rows (Platt scaling; at least
    ``min_support`` rows with both outcomes), then :func:`lowest_at_target`; None without."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    outcomes = [ok for _s, ok in reviewed]
    if len(reviewed) < min_support or all(outcomes) or not any(outcomes) or not open_scores:
        return None
    fit = LogisticRegression(C=1e6).fit(  # unregularized: Platt scaling
        np.array([[s] for s, _ok in reviewed]), outcomes
    )
    p = fit.predict_proba(np.asarray(open_scores, dtype=float)[:, None])[:, 1]
    return lowest_at_target(open_scores, p)


@dataclass
class Arm:
    """One suggester's project and what its reviewer saw."""

    name: str
    store: Store
    remap: Callable[[], None] | None
    reviewed: list[tuple[float, bool]] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)


def measure(arm: Arm, gold: dict[str, str], decisions: int, args: argparse.Namespace) -> None:
    rows = [(c, cid, sc if sc is not None else 0.0) for c, cid, sc in open_rows(arm.store)]
    correct = [cid is not None and id_key(cid) == id_key(gold[c]) for c, cid, _s in rows]
    scores = [sc for _c, _cid, sc in rows]
    t = TARGET if args.combiner else threshold(arm.reviewed, scores, args.min_support)
    oracle = lowest_at_target(scores, correct) if rows else None

    def share(at: float | None) -> tuple[float | None, float | None]:
        above = [ok for sc, ok in zip(scores, correct, strict=True) if at is not None and sc >= at]
        return (round(len(above) / len(rows), 4) if rows else None,
                round(sum(above) / len(above), 4) if above else None)  # fmt: skip

    (auto, auto_p), (best, best_p) = share(t), share(oracle)
    arm.log.append({
        "arm": arm.name, "decisions": decisions, "open_rows": len(rows),
        "open_acc@1": round(sum(correct) / len(rows), 4) if rows else None,
        "threshold": None if t is None else round(t, 4), "auto_share": auto,
        "auto_precision": auto_p, "oracle_threshold": None if oracle is None else round(oracle, 4),
        "oracle_share": best, "oracle_precision": best_p,
    })  # fmt: skip
    print(json.dumps(arm.log[-1]), flush=True)


def review_round(arm: Arm, gold: dict[str, str], per_round: int) -> int:
    """The reviewer decides the next ``per_round`` rows of the arm's queue; how many."""
    done = 0
    for entry in review_queue("review", limit=per_round, db=arm.store):
        ok = entry.concept_id is not None and id_key(entry.concept_id) == id_key(gold[entry.code])
        arm.reviewed.append((entry.score if entry.score is not None else 0.0, ok))
        if ok:
            decide("review", entry.code, "approve", reviewer="gold", db=arm.store)
        else:
            decide("review", entry.code, "pick", concept_id=gold[entry.code], reviewer="gold",
                   db=arm.store)  # fmt: skip
        done += 1
    return done


class TfidfRows(RowAnswers):
    """The TF-IDF suggester as a row matcher (every text is searchable)."""

    name = "tfidf"

    def __init__(self, kg_dir: str) -> None:
        from termnorm.search.lexical import TfidfMatcher

        self.matcher = TfidfMatcher(api.load_kg(kg_dir))

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        return [RowResult(c) for c in self.matcher.normalize_batch([str(t) for t in texts], k)]


def new_project(work: Path, name: str, codes: Path, settings: PipelineSettings) -> Store:
    db = work / f"{name}.db"
    for leftover in work.glob(f"{name}.db*"):
        leftover.unlink()
    store = open_store("review", str(db))
    init_project("review", codes, "code", "text", "count", settings=settings, db=store)
    return store


def plot(arms: list[Arm], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (acc, auto) = plt.subplots(1, 2, figsize=(11, 4.2))
    for arm in arms:
        xs = [p["decisions"] for p in arm.log]
        line = acc.plot(xs, [p["open_acc@1"] for p in arm.log], marker=".", label=arm.name)[0]
        auto.plot(xs, [p["auto_share"] or 0 for p in arm.log], marker=".",
                  color=line.get_color(), label=f"{arm.name}: estimated t")  # fmt: skip
        auto.plot(xs, [p["oracle_share"] or 0 for p in arm.log], linestyle="--",
                  color=line.get_color(), label=f"{arm.name}: oracle t")  # fmt: skip
    acc.set(xlabel="decisions made", ylabel="accuracy@1 of the rows not yet reviewed")
    auto.set(xlabel="decisions made", ylabel="share of open rows auto-approvable at 95 %")
    for ax in (acc, auto):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--mentions", action="append", required=True, help="FILE[:FORMAT]")
    parser.add_argument("--synonyms", action="append", type=Path, default=[])
    parser.add_argument("--runtime", default="torch")
    parser.add_argument("--combiner", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--every", type=int, default=100, help="decisions per round")
    parser.add_argument("--max-decisions", type=int, help="stop after this many")
    parser.add_argument("--min-support", type=int, default=20)
    parser.add_argument("--reuse-mapping", action="store_true")
    parser.add_argument("--arms", default="tf-idf,no learning,learning")
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--json", type=Path, help="write every checkpoint here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    sources = [
        (Path(m.split(":")[0]), m.split(":")[1] if ":" in m else None) for m in args.mentions
    ]
    codes = args.work / "codes.csv"
    gold = code_list(sources, codes)
    total = len(gold)
    limit = min(args.max_decisions or total, total)
    settings = PipelineSettings.of(
        index=args.index, synonyms=args.synonyms, runtime=args.runtime, combiner=args.combiner, k=5
    )
    print(f"{total} rows; {limit} decisions, re-mapped every {args.every}", flush=True)
    wanted = args.arms.split(",")
    arms: list[Arm] = []
    if "tf-idf" in wanted:
        card = json.loads((args.index / "index.json").read_text())
        store = new_project(args.work, "tfidf", codes, settings)
        start = time.perf_counter()
        rows = TfidfRows(card["kg"]["path"])
        run_project("review", lambda _s, _p: rows, db=store, show_progress=False)  # type: ignore[arg-type,return-value]
        print(f"tf-idf: mapped in {time.perf_counter() - start:.0f} s", flush=True)
        arms.append(Arm("tf-idf (Usagi's method)", store, None))
    if "learning" in wanted or "no learning" in wanted:
        mapped = args.work / "mapped-termnorm.db"
        if args.reuse_mapping and mapped.is_file():
            print(f"termnorm: the first mapping is {mapped}'s", flush=True)
        else:
            store = new_project(args.work, "mapped-termnorm", codes, settings)
            start = time.perf_counter()
            run_project("review", api.project_matcher, db=store, show_progress=False)
            took = time.perf_counter() - start
            print(f"termnorm: mapped {total} rows in {took:.0f} s ({total / took:.1f} rows/s)")
            store.close()
        for name in ("learning", "frozen"):
            for leftover in args.work.glob(f"{name}.db*"):
                leftover.unlink()
        shutil.copy(mapped, args.work / "learning.db")
        if "no learning" in wanted:
            shutil.copy(mapped, args.work / "frozen.db")
            arms.append(Arm("termnorm, no learning", open_store("review", str(args.work / "frozen.db")), None))  # fmt: skip
        if "learning" in wanted:
            live = open_store("review", str(args.work / "learning.db"))

            def remap(store: Store = live) -> None:
                start = time.perf_counter()
                report = run_project(
                    "review", api.project_matcher, db=store, remap=True, show_progress=False
                )
                took = time.perf_counter() - start
                print(f"  remapped {report.remapped} rows in {took:.0f} s "
                      f"({report.synonyms} learned synonyms)", flush=True)  # fmt: skip

            arms.append(Arm("termnorm, learning", live, remap))
    for arm in arms:
        decisions = 0
        measure(arm, gold, decisions, args)
        while decisions < limit:
            made = review_round(arm, gold, min(args.every, limit - decisions))
            if made == 0:
                break
            decisions += made
            if arm.remap is not None and decisions < total:
                arm.remap()
            measure(arm, gold, decisions, args)
        arm.store.close()
    if args.json:
        args.json.write_text(json.dumps([p for a in arms for p in a.log], indent=1) + "\n")
    if args.plot:
        names = ", ".join(p.name for p, _f in sources)
        plot(
            arms,
            args.plot,
            f"{total} distinct mention texts ({names}); re-mapped every {args.every} decisions",
        )


if __name__ == "__main__":
    main()
