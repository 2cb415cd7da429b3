"""Index builds that scale out: the local engine vs Ray at 1 and 2 workers, kill -9 and resume,
and the cost of assembling an index from its shards.

    python benchmarks/index_build_scale.py --work DIR [--terms 20000] [--shard-size 1024]
        [--model MODEL_DIR] [--runtime torch] [--sources icd10cm [hpo icd10who ...]]
        [--stages kg local ray1 ray2 local+ray1 kill spot merge]
        [--merge-sizes 20000,200000,1000000] [--json OUT]

``kg``     a KG of ``--terms`` distinct real-looking strings: the terms of termnorm's built-in
           loaders named by ``--sources`` (default ICD-10-CM descriptions and inclusion terms;
           concept ids prefixed with the source when there are several), shuffled with a
           fixed seed, half of the KG at most; the rest are seeded perturbations of random
           real terms (a swapped, dropped, doubled or replaced letter; a dropped or swapped
           word; a clinical qualifier added), each a synonym of its source term's concept.
           Written to ``DIR/kg-N`` (reused when there).
``local``  ``termnorm index build`` with the local engine (one core, the rate a Ray worker has);
``ray1``, ``ray2``  the same with ``--engine ray --workers 1|2`` (a local Ray, started and
           stopped by the command);
``local+ray1``  ``local`` and ``ray1`` at the same time, one core each (both rates in the
           time of one run; Ray's services share the cores);
``kill``   ``--engine ray --workers 2`` killed with SIGKILL once half of the shards are in
           ``OUT.shards``, then the same command again: its shards resumed, its time, and the
           extra work (killed run + rerun − an uninterrupted ``ray2``);
``spot``   shards 0, middle and last re-encoded in the benchmark's process (``--runtime``, one
           thread) and compared bit for bit with the rows of the ``kill`` build: the check
           when a local build of the whole KG is too long to repeat;
``merge``  the driver's assembly alone at ``--merge-sizes`` strings: synthetic float16 shards
           (384-d) in a work folder, then :meth:`TermIndex.from_tables` reading them all back
           (nothing to encode), concept means, and the save; each size in its own process.

Every build runs as its own process (``termnorm index build``) with ``--runtime`` (torch by
default) and ``--threads 1`` (the driver's encoder and every Ray worker's), on the CPU, backend
``exact``. terms/s = distinct strings / wall time of the whole command (model
loading and Ray start included); ``encode terms/s`` divides by the progress bar's elapsed
time instead (from the bar's creation, after the model is loaded, to the last shard).
Peak RSS per process is the kernel's high-water mark (``VmHWM`` in ``/proc/PID/status``)
of the driver and of every process below it, polled every 0.2 s: Ray workers (``ray::``
processes) and Ray's own services (raylet, GCS...). Every output is compared with the local
one: term and concept vector files byte for byte, tables, card without ``created`` and the
engine fields. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from termnorm.cli.main import main; main(sys.argv[1:])"
QUALIFIERS = ["acute", "chronic", "left", "right", "bilateral", "recurrent", "severe", "mild",
              "primary", "secondary", "congenital", "unspecified"]  # fmt: skip


# ----------------------------------------------------------------------------- the KG
def _perturb(term: str, rng: random.Random) -> str:
    """One seeded character or word edit of ``term``."""
    words = term.split()
    kind = rng.randrange(7)
    if kind == 0 and len(words) > 2:
        del words[rng.randrange(len(words))]
        return " ".join(words)
    if kind == 1 and len(words) > 1:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
        return " ".join(words)
    if kind == 2:
        return f"{rng.choice(QUALIFIERS)} {term.lower()}"
    if len(term) < 4:
        return term + rng.choice("sxe")
    i = rng.randrange(1, len(term) - 1)
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    if kind == 3:
        return term[:i] + term[i + 1] + term[i] + term[i + 2 :]
    if kind == 4:
        return term[:i] + term[i + 1 :]
    if kind == 5:
        return term[:i] + term[i] + term[i:]
    return term[:i] + letter + term[i + 1 :]


def _real_terms(sources: list[str]) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """``(concept_id, term)`` pairs and concept names of the built-in ``sources`` (ids
    prefixed with the source when there are several: ICD-10-CM and WHO codes overlap)."""
    from termnorm.kg.build import SourceSpec, build_kg

    pairs: list[tuple[str, str]] = []
    names: dict[str, str] = {}
    for source in sources:
        kg, _ = build_kg([SourceSpec(source)])
        tag = f"{source}:" if len(sources) > 1 else ""
        pairs += [
            (tag + c, t) for c, t in zip(kg.terms["concept_id"], kg.terms["term"], strict=True)
        ]
        names.update(
            (tag + c, n)
            for c, n in zip(kg.concepts["concept_id"], kg.concepts["name"], strict=True)
        )
    return pairs, names


def make_kg(
    n_terms: int, out: Path, seed: int = 0, sources: tuple[str, ...] = ("icd10cm",)
) -> Path:
    """A KG of ``n_terms`` distinct strings (module doc) at ``out``."""
    from termnorm.kg import KnowledgeGraph

    if (out / "kg.json").is_file():
        return out
    pairs, names = _real_terms(list(sources))
    rng = random.Random(seed)
    rng.shuffle(pairs)
    real = pairs[: min(len(pairs), n_terms // 2 or 1)]
    seen: set[str] = set()
    terms: list[tuple[str, str]] = []
    for cid, term in real:
        if term not in seen:
            seen.add(term)
            terms.append((cid, term))
    while len(terms) < n_terms:
        cid, term = rng.choice(real)
        variant = _perturb(term, rng)
        if variant not in seen:
            seen.add(variant)
            terms.append((cid, variant))
    used = {cid for cid, _ in terms}
    concepts = [{"concept_id": c, "name": names[c]} for c in sorted(used)]
    label = "+".join(sources) + "+perturbed"
    rows = [{"concept_id": c, "term": t, "source": label} for c, t in terms]
    kg = KnowledgeGraph.from_records(concepts, rows)
    return kg.save(out, card={"sources": [{"format": label, "seed": seed}]})


# ----------------------------------------------------------------------------- processes
def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(entry))
    return kids


def _tree(root: int) -> list[int]:
    kids, out, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += kids.get(pid, [])
    return out


def _hwm_mib(pid: int) -> tuple[str, float] | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return None
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return (cmd, int(match.group(1)) / 1024) if match else None


class Watched:
    """A command run as a child process, the peak RSS of it and of every process below it."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self.log = log.open("w")
        self.start = time.perf_counter()
        # Ray runs its workers at nice 15; at 0 they compete with a local build on equal terms
        env = {"RAY_worker_niceness": "0", **os.environ}
        self.proc = subprocess.Popen(
            argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT, env=env
        )
        self.peaks: dict[int, tuple[str, float]] = {}
        self.pids: set[int] = set()

    def poll(self) -> bool:
        """Sample the process tree; whether the command still runs."""
        for pid in _tree(self.proc.pid):
            self.pids.add(pid)
            got = _hwm_mib(pid)
            if got is not None and got[1] >= self.peaks.get(pid, ("", 0.0))[1]:
                self.peaks[pid] = got
        return self.proc.poll() is None

    def wait(self, until: Any = None) -> float:
        """Poll until the command ends (or ``until()`` says stop: SIGKILL); wall seconds."""
        while self.poll():
            if until is not None and until():
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                break
            time.sleep(0.2)
        wall = time.perf_counter() - self.start
        self.log.close()
        return wall

    def memory(self) -> dict[str, float]:
        """Peak RSS (MiB): the driver, the largest Ray worker (``ray::_ShardActor`` or an
        idle ``ray::IDLE`` worker process), the sum of Ray's services (GCS, raylet, agents)."""
        driver = self.peaks.get(self.proc.pid, ("", 0.0))[1]
        others = [(c, m) for pid, (c, m) in self.peaks.items() if pid != self.proc.pid]
        workers = [m for c, m in others if c.startswith(("ray::_ShardActor", "ray::IDLE"))]
        services = [m for c, m in others if not c.startswith(("ray::_ShardActor", "ray::IDLE"))]
        return {"driver_mib": round(driver, 1), "worker_max_mib": round(max(workers, default=0), 1),
                "worker_processes": len(workers), "ray_services_mib": round(sum(services), 1)}  # fmt: skip

    def reap(self, grace: float = 30.0) -> int:
        """After a kill: wait for the orphans this command started to exit; SIGKILL those
        still there after ``grace`` seconds (by pid: only processes of this command).
        How many had to be killed."""
        deadline, left = time.time() + grace, set()
        while time.time() < deadline:
            left = {p for p in self.pids - {self.proc.pid} if Path(f"/proc/{p}").exists()}
            if not left:
                return 0
            time.sleep(1)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(left)


def _bar_seconds(log: Path) -> float | None:
    """The progress bar's last elapsed time (``[MM:SS<`` or ``[H:MM:SS<``)."""
    found = re.findall(r"encoding \([^)]*\): 100%.*?\[(\d+(?::\d+){1,2})<", log.read_text())
    if not found:
        return None
    seconds = 0
    for part in found[-1].split(":"):
        seconds = seconds * 60 + int(part)
    return float(seconds)


# ----------------------------------------------------------------------------- builds
def build_argv(args: argparse.Namespace, kg: Path, out: Path, engine: list[str]) -> list[str]:
    argv = [sys.executable, "-c", CLI, "index", "build", "--kg", str(kg),
            "--out", str(out), "--backend", "exact", "--runtime", args.runtime, "--device", "cpu",
            "--threads", "1", "--shard-size", str(args.shard_size), "--overwrite", *engine]  # fmt: skip
    return argv + (["--model", str(args.model)] if args.model else [])


def same_index(a: Path, b: Path) -> bool:
    """Vectors byte for byte, tables, card without ``created`` and engine fields."""
    import pandas as pd

    for name in ("term_vectors.npy", "concept_vectors.npy"):
        if (a / name).read_bytes() != (b / name).read_bytes():
            return False
    for name in ("terms.parquet", "concepts.parquet"):
        if not pd.read_parquet(a / name).equals(pd.read_parquet(b / name)):
            return False
    cards = []
    for folder in (a, b):
        card = json.loads((folder / "index.json").read_text())
        card.pop("created")
        for key in ("engine", "workers", "resumed_shards"):
            card["build"].pop(key, None)
        cards.append(card)
    return bool(cards[0] == cards[1])


def start_build(args: argparse.Namespace, kg: Path, name: str, engine: list[str]) -> Watched:
    out = args.work / f"idx-{name}"
    return Watched(build_argv(args, kg, out, engine), args.work / f"{name}.log")


def finish_build(args: argparse.Namespace, name: str, watched: Watched) -> dict[str, Any]:
    """Wait for a started build; its wall time, rates, peak memory, agreement with local."""
    wall = watched.wait()
    if watched.proc.returncode != 0:
        raise SystemExit(f"{name} failed, see {args.work / f'{name}.log'}")
    encode = _bar_seconds(args.work / f"{name}.log")
    result = {"run": name, "wall_s": round(wall, 1), "terms_per_s": round(args.terms / wall, 1),
              "encode_s": encode, **watched.memory()}  # fmt: skip
    if encode:
        result["encode_terms_per_s"] = round(args.terms / encode, 1)
    return result


def compare_with_local(args: argparse.Namespace, result: dict[str, Any]) -> dict[str, Any]:
    out = args.work / f"idx-{result['run']}"
    if result["run"] != "local" and (args.work / "idx-local").is_dir():
        result["identical_to_local"] = same_index(args.work / "idx-local", out)
    return result


def run_kill(args: argparse.Namespace, kg: Path, uninterrupted: float | None) -> dict[str, Any]:
    from termnorm.index.shards import shard_work_dir

    out = args.work / "idx-kill"
    work = shard_work_dir(out)
    n_shards = -(-args.terms // args.shard_size)
    engine = ["--engine", "ray", "--workers", "2"]
    first = Watched(build_argv(args, kg, out, engine), args.work / "kill-1.log")
    wall1 = first.wait(until=lambda: len(list(work.glob("shard-*.npy"))) >= n_shards // 2)
    done = len(list(work.glob("shard-*.npy")))
    killed_orphans = first.reap()
    second = Watched(build_argv(args, kg, out, engine), args.work / "kill-2.log")
    wall2 = second.wait()
    if second.proc.returncode != 0:
        raise SystemExit(f"the rerun failed, see {args.work / 'kill-2.log'}")
    card = json.loads((out / "index.json").read_text())
    result = {"run": "kill -9 at half, rerun", "shards": n_shards, "shards_at_kill": done,
              "killed_run_s": round(wall1, 1), "rerun_s": round(wall2, 1),
              "rerun_resumed_shards": card["build"]["resumed_shards"],
              "orphans_killed": killed_orphans, **second.memory()}  # fmt: skip
    if uninterrupted is not None:
        result["extra_s"] = round(wall1 + wall2 - uninterrupted, 1)
    if (args.work / "idx-local").is_dir():
        result["identical_to_local"] = same_index(args.work / "idx-local", out)
    return result


def run_spot(args: argparse.Namespace, kg: Path, name: str, picks: int = 3) -> dict[str, Any]:
    """Re-encode ``picks`` shards of the plan (first, middle, last...) in this process with the
    build's encoder settings and compare them, bit for bit, with the rows of ``idx-NAME``:
    a check that a build too large to repeat locally holds the local engine's vectors."""
    import numpy as np

    from termnorm.encoders import TermEncoder
    from termnorm.index.encoding import encode_shard
    from termnorm.index.shards import plan_shards
    from termnorm.index.tables import index_tables
    from termnorm.kg import KnowledgeGraph

    out = args.work / f"idx-{name}"
    card = json.loads((out / "index.json").read_text())
    tables = index_tables(KnowledgeGraph.load(kg))
    shards = plan_shards(len(tables.uniques), args.shard_size)
    encoder = TermEncoder.load(
        card["model"]["path"], pooling=card["model"]["pooling"],
        max_length=card["model"]["max_length"], runtime=args.runtime, threads=1,
    )  # fmt: skip
    vectors = np.load(out / "term_vectors.npy", mmap_mode="r")
    chosen = sorted({round(i * (len(shards) - 1) / max(picks - 1, 1)) for i in range(picks)})
    start, equal, strings = time.perf_counter(), True, 0
    for i in chosen:
        shard = shards[i]
        local = encode_shard(encoder, list(tables.uniques[shard.start : shard.stop]), 256)
        rows = np.flatnonzero((tables.codes >= shard.start) & (tables.codes < shard.stop))
        equal &= bool(np.array_equal(vectors[rows], local[tables.codes[rows] - shard.start]))
        strings += len(shard)
    return {"run": f"spot check of {name}", "shards_checked": chosen, "strings": strings,
            "seconds": round(time.perf_counter() - start, 1), "identical": equal}  # fmt: skip


# ----------------------------------------------------------------------------- merge cost
def merge_child(size: int, work: Path, dim: int = 384, shard_size: int = 16384) -> None:
    """In a fresh process: assemble and save an index of ``size`` synthetic strings from
    stored shards (nothing encoded); prints a JSON line."""
    import resource

    import numpy as np

    from termnorm.encoders.pooling import Pooling
    from termnorm.index.encoding import LocalEngine
    from termnorm.index.shards import ShardStore, plan_shards
    from termnorm.index.tables import index_tables
    from termnorm.index.term_index import TermIndex
    from termnorm.kg import KnowledgeGraph

    class Stored:  # describes synthetic vectors; encodes nothing
        path, pooling, max_length, dimension, fingerprint = None, Pooling.MEAN, 32, dim, "synthetic"

        def encode(self, *a: Any, **k: Any) -> Any:
            raise AssertionError("every shard is stored")

    kg = KnowledgeGraph.load(make_kg(size, work / f"kg-{size}"))
    tables = index_tables(kg)
    shards = plan_shards(len(tables.uniques), shard_size)
    store = ShardStore(work / f"merge-{size}.shards", {"synthetic": size}, dim)
    rng = np.random.default_rng(0)
    for shard in shards:
        if not store.has(shard):
            v = rng.standard_normal((len(shard), dim)).astype(np.float32)
            store.write(shard, (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float16))
    start = time.perf_counter()
    index = TermIndex.from_tables(
        tables, kg, Stored(), shards, LocalEngine(Stored(), 1), store, "exact", 1 << 20, False
    )  # type: ignore[arg-type]
    assembled = time.perf_counter() - start
    index.save(work / f"merge-{size}")
    total = time.perf_counter() - start
    store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"run": f"merge {size}", "strings": size, "terms": len(tables.terms),
                      "assemble_s": round(assembled, 2), "assemble_and_save_s": round(total, 2),
                      "peak_rss_mib": round(peak, 1)}))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--terms", type=int, default=20000)
    parser.add_argument("--shard-size", type=int, default=1024)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--runtime", default="torch", help="torch, onnx, onnx-int8 (one thread)")
    parser.add_argument("--sources", nargs="+", default=["icd10cm"],
                        help="built-in terminologies whose terms seed the KG")  # fmt: skip
    parser.add_argument(
        "--stages", nargs="+", default=["kg", "local", "ray1", "ray2", "kill", "merge"]
    )
    parser.add_argument("--merge-sizes", default="20000,200000,1000000")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--merge-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.merge_child is not None:
        merge_child(args.merge_child, args.work)
        return
    kg = make_kg(args.terms, args.work / f"kg-{args.terms}", sources=tuple(args.sources))
    results: list[dict[str, Any]] = []
    walls: dict[str, float] = {}
    engines = {"local": [], "ray1": ["--engine", "ray", "--workers", "1"],
               "ray2": ["--engine", "ray", "--workers", "2"]}  # fmt: skip
    if "local+ray1" in args.stages:  # one core each, at the same time
        both = {name: start_build(args, kg, name, engines[name]) for name in ("local", "ray1")}
        done = {name: finish_build(args, name, w) for name, w in both.items()}
        for name in both:
            results.append(compare_with_local(args, done[name] | {"concurrent": True}))
            print(json.dumps(results[-1]), flush=True)
    for stage, engine in engines.items():
        if stage in args.stages:
            watched = start_build(args, kg, stage, engine)
            results.append(compare_with_local(args, finish_build(args, stage, watched)))
            walls[stage] = results[-1]["wall_s"]
            print(json.dumps(results[-1]), flush=True)
    if "kill" in args.stages:
        results.append(run_kill(args, kg, walls.get("ray2")))
        print(json.dumps(results[-1]), flush=True)
    if "spot" in args.stages:
        results.append(run_spot(args, kg, "kill"))
        print(json.dumps(results[-1]), flush=True)
    if "merge" in args.stages:
        for size in (int(s) for s in args.merge_sizes.split(",")):
            argv = [sys.executable, __file__, "--work", str(args.work), "--merge-child", str(size)]
            line = subprocess.run(argv, check=True, capture_output=True, text=True, cwd=ROOT)
            results.append(json.loads(line.stdout.strip().splitlines()[-1]))
            print(json.dumps(results[-1]), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
