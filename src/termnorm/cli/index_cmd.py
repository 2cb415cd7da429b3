"""``termnorm index build`` and ``termnorm index info``: make and inspect index folders.

Registering is cheap (the option enums and defaults come from import-free modules); the
encoder and KG load when a command runs. The options are :func:`termnorm.build_index`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from termnorm.cli._options import RUNTIME_HELP, overwrite_option, threads_option
from termnorm.encoders.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MAX_LENGTH
from termnorm.encoders.device import DEVICE_HELP, Device
from termnorm.encoders.pooling import Pooling
from termnorm.encoders.runtime import Runtime
from termnorm.engines import Engine
from termnorm.index.base import Backend
from termnorm.index.build_config import DEFAULT_SHARD_SIZE, SCALE_HELP

BUILD_HELP = """Encode every term of a KG and write an index folder (vectors, tables, index.json).

Terms ("T") and concept mean vectors ("C") are both indexed. The backend is chosen from the number of vectors and --memory-budget unless forced with --backend: exact search for small KGs, faiss flat, HNSW or IVF-PQ as they grow or memory gets tight.

Examples:

  termnorm index build --kg kg/medic --out idx/medic

  termnorm index build --kg kg/hpo --model models/coder --pooling cls --out idx/hpo-coder

  termnorm index build --kg kg/umls --backend faiss-ivfpq --memory-budget 8GB --out idx/umls

  termnorm index build --kg kg/umls --out idx/umls --engine ray --workers 16 --device cuda

The distinct strings are encoded in shards; finished shards are kept in OUT.shards until the index is saved, so the same command run again after a kill (of the driver or a worker) encodes only the missing shards. A changed KG, model, runtime, device or shard size is refused by name (--overwrite deletes the old shards and starts again). --engine ray gives the same vectors as the local engine.
"""

INFO_HELP = """Show what an index folder was built from: model, KG, backend, counts.

Examples:

  termnorm index info idx/medic

  termnorm index info idx/medic --json

The files are checked against the SHA-256 digests in index.json first (one read of each file,
about 8 s for 15 M vectors); a damaged file exits with code 1, naming the file and the command
that rebuilds the index. --no-verify skips the check (the output then says "not verified").
"""


def _summary(info: dict[str, Any]) -> list[tuple[str, str]]:
    """Key/value rows for the human-readable ``index info`` / ``index build`` output."""
    model, kg, backend = info["model"], info["kg"], info["backend"]
    counts = info.get("counts", {})
    return [
        ("path", str(info.get("path"))),
        ("model", f"{model['path']} ({model['pooling']}, max_length {model['max_length']})"),
        ("model fingerprint", str(model["fingerprint"])),
        ("dimension", str(model["dimension"])),
        ("kg", f"{kg.get('path') or kg.get('source') or '(in memory)'}"),
        ("kg fingerprint", str(kg.get("fingerprint") or "-")),
        ("terms", f"{counts.get('terms')} ({backend['terms']['backend']})"),
        ("concepts", f"{counts.get('concepts')} ({backend['concepts']['backend']})"),
        ("relations", str(counts.get("relations", "-"))),
        ("memory", _memory(info)),
        ("build", _build(info.get("build"))),
        ("dropped", ", ".join(f"{k} {v}" for k, v in counts.items() if k not in _SHOWN and v)),
        ("termnorm", str(info.get("termnorm_version"))),
        ("created", str(info.get("created"))),
    ] + ([("verified", _verified(info["verified"]))] if "verified" in info else [])


def _verified(files: int | None) -> str:
    """The ``verified`` row: how many files matched their digests, or that none were read."""
    if files is None:
        return "not verified (--no-verify)"
    return f"yes: {files} file{'s' * (files != 1)} match the SHA-256 digests of index.json"


def _build(build: dict[str, Any] | None) -> str:
    """Engine, device and shards (cards written before sharded builds: ``-``)."""
    if not build:
        return "-"
    workers = build.get("workers")
    who = build["engine"] + (f", {workers} worker{'s' * (workers != 1)}" if workers else "")
    resumed = build.get("resumed_shards", 0)
    return f"{who}, {build['device']}; {build['shards']} shards of {build['shard_size']:,}" + (
        f" ({resumed} resumed from an earlier run)" if resumed else ""
    )


def _mib(n: object) -> str:
    return f"{int(n) / 2**20:,.1f} MiB" if isinstance(n, int) else "?"


def _memory(info: dict[str, Any]) -> str:
    """Budget, then per space: backend, estimated and actual bytes (older cards: budget)."""
    parts = [f"budget {_mib(info.get('memory_budget'))}"]
    for space, entry in info["backend"].items():
        if "estimated_bytes" in entry:
            parts.append(
                f"{space} {entry['backend']} est. {_mib(entry['estimated_bytes'])}, "
                f"actual {_mib(entry.get('actual_bytes'))}"
            )
    return "; ".join(parts)


_SHOWN = {"terms", "concepts", "relations", "distinct_strings", "names_added_as_terms"}


def _print_info(info: dict[str, Any], json_out: bool) -> None:
    if json_out:
        typer.echo(json.dumps(info, indent=2, ensure_ascii=False, default=str))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(show_header=False, box=None)
    for key, value in _summary(info):
        table.add_row(key, value or "-")
    Console().print(table)


def register(app: typer.Typer) -> None:
    """Attach the ``index`` group to ``app``."""
    group = typer.Typer(help="Build and inspect term indexes.", no_args_is_help=True)

    @group.command("build", help=BUILD_HELP)
    def build(
        kg: Path = typer.Option(..., "--kg", help="KG folder written by 'termnorm kg build'."),
        out: Path = typer.Option(..., "--out", help="Index folder to write."),
        overwrite: bool = overwrite_option(),
        model: Path | None = typer.Option(
            None,
            "--model",
            help="Encoder folder (HF or sentence-transformers); default all-MiniLM-L6-v2.",
        ),
        pooling: Pooling | None = typer.Option(
            None, "--pooling", help="Pooling; default: the model folder's own, else mean."
        ),
        backend: Backend = typer.Option(
            Backend.AUTO,
            "--backend",
            help="Search backend; auto picks from size and memory budget.",
        ),
        memory_budget: str | None = typer.Option(
            None,
            "--memory-budget",
            help="Memory the index may use, e.g. 4GB (default: half of this machine's).",
        ),
        max_length: int | None = typer.Option(
            None,
            "--max-length",
            help=f"Max tokens per term; default {DEFAULT_MAX_LENGTH}, or the model folder's "
            "max_seq_length when smaller.",
        ),
        batch_size: int = typer.Option(
            DEFAULT_BATCH_SIZE, "--batch-size", help="Terms per encoder batch."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the index card as JSON."),
        runtime: Runtime = typer.Option(Runtime.TORCH, "--runtime", help=RUNTIME_HELP),
        threads: int | None = threads_option(),
        engine: Engine = typer.Option(Engine.LOCAL, "--engine", help=SCALE_HELP["engine"]),
        workers: int | None = typer.Option(None, "--workers", help=SCALE_HELP["workers"]),
        address: str | None = typer.Option(
            None, "--address", "--ray-address", help=SCALE_HELP["address"]
        ),
        shard_size: int = typer.Option(
            DEFAULT_SHARD_SIZE, "--shard-size", help=SCALE_HELP["shard_size"]
        ),
        device: Device = typer.Option(Device.AUTO, "--device", help=DEVICE_HELP),
    ) -> None:
        from termnorm.api import build_index

        index = build_index(
            kg,
            model=model,
            pooling=pooling,
            backend=backend,
            out=out,
            overwrite=overwrite,
            memory_budget=memory_budget,
            max_length=max_length,
            batch_size=batch_size,
            show_progress=True,
            runtime=runtime.value,
            threads=threads,
            engine=engine.value,
            workers=workers,
            address=address,
            shard_size=shard_size,
            device=device.value,
        )
        _print_info(index.info(), json_out)

    @group.command("info", help=INFO_HELP)
    def info(
        index_dir: Path = typer.Argument(..., help="Index folder."),
        json_out: bool = typer.Option(False, "--json", help="Print the index card as JSON."),
        verify: bool = typer.Option(
            True,
            "--verify/--no-verify",
            help="Check the tables and vectors against the card's SHA-256 digests (one read "
            "of each file) and exit 1 when one differs.",
        ),
    ) -> None:
        from termnorm._artifacts import read_card
        from termnorm.index.integrity import verify_index_files
        from termnorm.index.term_index import CARD_NAME

        card = read_card(index_dir, CARD_NAME, "index")
        verified = verify_index_files(index_dir, card) if verify else None
        _print_info({"path": str(index_dir), "verified": verified, **card}, json_out)

    app.add_typer(group, name="index")
