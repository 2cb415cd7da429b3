"""``termnorm env``: versions, devices and default paths, for bug reports."""

from __future__ import annotations

import json
import platform

import typer


def environment() -> dict[str, object]:
    """Versions of termnorm and its main dependencies, the device, and cache paths."""
    import sentence_transformers
    import torch
    import transformers

    from termnorm._version import __version__
    from termnorm.paths import cache_dir

    try:
        import faiss

        faiss_version: str | None = faiss.__version__
    except ImportError:
        faiss_version = None
    return {
        "termnorm": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "cuda_available": torch.cuda.is_available(),
        "torch_threads": torch.get_num_threads(),
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "faiss": faiss_version,
        "cache_dir": str(cache_dir()),
    }


def register(app: typer.Typer) -> None:
    """Attach ``env`` to ``app``."""

    @app.command("env")
    def env(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
        """Print versions, device and cache location.

        Example: termnorm env --json
        """
        info = environment()
        if json_out:
            typer.echo(json.dumps(info, indent=2))
        else:
            for key, value in info.items():
                typer.echo(f"{key:22s} {value}")
