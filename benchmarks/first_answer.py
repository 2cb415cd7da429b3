"""The first answer a new user waits for: the README's Quick start command, empty cache.

    python benchmarks/first_answer.py --venv VENV [--query "heart attack"] [--repeat 1] [--json]

Runs ``VENV/bin/termnorm normalize QUERY`` (the Quick start's last command) in a fresh
process with ``TERMNORM_CACHE`` set to a new empty folder, so it builds the default index
first, exactly as after ``pip install torch==2.13.0`` and ``pip install ".[abbreviations,serve]"``
into ``VENV`` (a real venv, not one with ``--system-site-packages``). Prints the CPU seconds of
the whole process tree (user + sys, from ``getrusage(RUSAGE_CHILDREN)``: the figure that does
not depend on how busy the machine is) and the wall seconds. The environment's thread settings
(``OMP_NUM_THREADS`` ...) are removed, as a new user's shell has none.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

#: variables a user's shell does not set and that would change the measured run
_CLEARED = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONPATH", "TERMNORM_CACHE")


@dataclass(frozen=True)
class FirstAnswer:
    """One run: CPU seconds of the process tree (user, sys), wall seconds, its answer."""

    user_s: float
    sys_s: float
    wall_s: float
    answer: str

    @property
    def cpu_s(self) -> float:
        """User + sys seconds."""
        return self.user_s + self.sys_s


def first_answer(venv: Path, query: str) -> FirstAnswer:
    """Run the Quick start command in ``venv`` with a new empty cache and measure it.

    Raises:
        FileNotFoundError: ``venv`` has no ``bin/termnorm`` (install termnorm there first).
        subprocess.CalledProcessError: the command failed (its stderr is in the error).
    """
    command = venv / "bin" / "termnorm"
    if not command.is_file():
        raise FileNotFoundError(
            f"{command} not found: make the venv as in the README's Quick start "
            f"(python -m venv {venv}; {venv}/bin/pip install torch==2.13.0; "
            f'{venv}/bin/pip install ".[abbreviations,serve]")'
        )
    with tempfile.TemporaryDirectory(prefix="termnorm-first-answer-") as cache:
        env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
        env["TERMNORM_CACHE"] = cache
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            [str(command), "normalize", query], env=env, capture_output=True, text=True
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return FirstAnswer(
        user_s=after.ru_utime - before.ru_utime,
        sys_s=after.ru_stime - before.ru_stime,
        wall_s=wall,
        answer=done.stdout.strip(),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--venv", type=Path, required=True, help="The Quick start's venv.")
    parser.add_argument("--query", default="heart attack")
    parser.add_argument("--repeat", type=int, default=1, help="Runs, each with an empty cache.")
    parser.add_argument("--json", action="store_true", help="Print the runs as JSON.")
    args = parser.parse_args()
    runs = [first_answer(args.venv, args.query) for _ in range(args.repeat)]
    if args.json:
        print(json.dumps([asdict(r) | {"cpu_s": r.cpu_s} for r in runs], indent=2))
        return
    for r in runs:
        print(
            f"first answer: {r.cpu_s:.1f} CPU-s (user {r.user_s:.1f}, sys {r.sys_s:.1f}), "
            f"{r.wall_s:.1f} s wall, load {os.getloadavg()[0]:.1f}"
        )
    print(runs[-1].answer, file=sys.stderr)


if __name__ == "__main__":
    main()
