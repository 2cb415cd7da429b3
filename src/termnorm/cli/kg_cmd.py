"""``termnorm kg build | info | split | keywords``: compile terminologies into a KG folder,
inspect and split it, mine a keyword vocabulary (sites, types) from KG folders.

Registering is cheap (no pandas import: the format names come from the import-free
:mod:`termnorm.kg.formats`); the KG modules load when a command runs.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from termnorm.cli._config_options import PlainHelpCommand, with_options
from termnorm.cli._options import overwrite_option
from termnorm.cli._source_flags import SourceFlag, flag_values, source_flag_params, source_flags
from termnorm.kg.formats import KGFormat

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.kg.build import SourceSpec

BUILTIN = "builtin"

BUILD_HELP = """Compile one or more terminologies into a KG folder (Parquet tables + kg.json).

SOURCE is a file or folder (a UMLS META folder, an .obo file, a MEDIC file, a TSV/CSV or BioSyn dictionary, an Athena download, a SNOMED CT RF2 release, LOINC's Loinc.csv, a FHIR CodeSystem JSON or NDJSON); leave it out, or write 'builtin', for the built-in HPO (obo, hpo), ICD-10-CM (icd10cm) and the installed GNU Health packages (icd10who, icd9procs, gnuhealth).

Add more sources with --add FORMAT[:PATH][#key=value,...]; concepts with the same ID merge. Source flags (--lang, --prefix, ...) apply to every source that takes them; '#key=value' options after an --add apply to that source only.

Examples:

  termnorm kg build --format hpo --out kg/hpo

  termnorm kg build /data/umls/2024AA/META --format umls --sab MSH,SNOMEDCT_US --one-direction --out kg/umls

  termnorm kg build ../shared/benchmarks/medic/medic_06Jul2012.txt --format medic --add hpo:builtin --out kg/medic_hpo

  termnorm kg build --format gnuhealth --package icd11,who-essential-medicines --lang en,es,fr --out kg/gnuhealth

  termnorm kg build SnomedCT_InternationalRF2_PRODUCTION_20240101T120000Z --format snomed --out kg/snomed

  termnorm kg build Loinc_2.77/LoincTable/Loinc.csv --format loinc --include-status TRIAL --out kg/loinc

  termnorm kg build codesystem.json --format fhir --prefix LOCAL --out kg/local

  termnorm kg build dict.tsv --format tsv --prefix MYDICT --add 'biosyn:train_dictionary.txt#prefix=MESH' --out kg/dict
"""


def parse_add(value: str) -> SourceSpec:
    """``FORMAT[:PATH][#key=value,...]`` → a :class:`SourceSpec` (PATH ``builtin`` = none).

    A list value continues over commas until the next ``key=``:
    ``hpo#databases=OMIM,ORPHA,with_annotations=true``.
    """
    from termnorm.kg.build import SourceSpec

    spec, options = value, {}
    head, sep, tail = value.rpartition("#")
    if sep and "=" in tail:
        spec = head
        key = ""
        for item in tail.split(","):
            name, eq, val = item.partition("=")
            if eq and name.strip():
                key = name.strip()
                options[key] = val.strip()
            elif key:
                options[key] += "," + item.strip()
            else:
                raise ValueError(f"expected key=value after '#', got {item!r}")
    fmt, _, path = spec.partition(":")
    path = path.strip()
    return SourceSpec(KGFormat.parse(fmt), None if path in ("", BUILTIN) else Path(path), options)


def _primary(source: str | None, fmt: str | None) -> SourceSpec | None:
    """The SOURCE argument as a spec (its format given or inferred); None when absent."""
    from termnorm.kg.build import SourceSpec

    if source is None and fmt is None:
        return None
    path = None if source in (None, BUILTIN) else Path(str(source))
    return SourceSpec(KGFormat.parse(fmt or _infer_format(path)), path, {})


def _infer_format(path: Path | None) -> str:
    """Format of a SOURCE given without --format: a UMLS folder, an .obo file, an RF2 release
    (a ``sct2_Concept_Snapshot`` file under it) or ``Loinc.csv``."""
    if path is not None and path.suffix == ".obo":
        return "obo"
    if path is not None and path.name.casefold() == "loinc.csv":
        return "loinc"
    if path is not None and path.is_dir() and any(path.glob("**/MRCONSO.RRF*")):
        return "umls"
    if path is not None and path.is_dir() and any(path.glob("**/sct2_Concept_Snapshot*")):
        return "snomed"
    raise ValueError(
        f"cannot tell the format of {path}; pass --format {{{','.join(f.value for f in KGFormat)}}}"
    )


def _with_flags(specs: list[SourceSpec], given: dict[SourceFlag, Any]) -> list[SourceSpec]:
    """Apply the source flags given (flag: value) to every spec whose format has the flag's
    field (per-spec options win); a flag that applies to none of them is a ``ValueError``."""
    from termnorm.kg.build import SourceSpec

    out = []
    used: set[SourceFlag] = set()
    for spec in specs:
        options = dict(spec.options)
        for flag, value in given.items():
            name = flag.fields.get(spec.format)
            if name is not None:
                used.add(flag)
                options.setdefault(name, value)
        out.append(SourceSpec(spec.format, spec.path, options))
    unused = sorted(flag.typed(value) for flag, value in given.items() if flag not in used)
    if unused:
        raise ValueError(f"{', '.join(unused)} does not apply to any of the given sources")
    return out


KEYWORDS_HELP = """Mine a keyword vocabulary (site and type keywords) from KG folders, for the keyword-attentive ranker (termnorm rank train --keywords FILE).

--lang en: sites from HPO's organ-system branches and 'Abnormality of X' / 'Abnormal X morphology' names, types from the head words of disease names (MEDIC, HPO). --lang zh: Chinese procedure sites and types from the zh names of a procedure KG (icd9procs). The method: termnorm.kg.keyword_mining.

Examples:

  termnorm kg keywords --kg kg/hpo --kg kg/medic --lang en --out keywords_en.tsv

  termnorm kg keywords --kg kg/icd9procs --lang zh --out keywords_zh_procedures.tsv
"""


def keywords(
    kg: list[Path] = typer.Option(..., "--kg", exists=True, help="KG folder; repeatable."),
    lang: str = typer.Option(..., "--lang", help="en (diseases, phenotypes) or zh (procedures)."),
    out: Path = typer.Option(..., "--out", help="Keyword file (TSV) to write."),
) -> None:
    from termnorm.kg.graph import KnowledgeGraph
    from termnorm.kg.keyword_mining import (
        mine_chinese_procedure_keywords,
        mine_english_keywords,
    )

    graphs = [KnowledgeGraph.load(path) for path in kg]
    if lang == "en":
        vocabulary = mine_english_keywords(graphs)
    elif lang == "zh":
        if len(graphs) != 1:
            raise typer.BadParameter("--lang zh mines one procedure KG: give one --kg")
        vocabulary = mine_chinese_procedure_keywords(graphs[0])
    else:
        raise typer.BadParameter("--lang must be en or zh")
    sources = ", ".join(f"{p.name} ({g.fingerprint})" for p, g in zip(kg, graphs, strict=True))
    vocabulary.save(
        out,
        comments=[
            f"built by: termnorm kg keywords --lang {lang} from {sources}",
            f"{len(vocabulary.sites)} sites, {len(vocabulary.types)} types "
            "(method: termnorm.kg.keyword_mining)",
        ],
    )
    typer.echo(
        f"wrote {len(vocabulary.sites)} site and {len(vocabulary.types)} type keywords to {out}"
    )


def register(app: typer.Typer) -> None:
    """Attach the ``kg`` command group (``build``, ``info``) to ``app``."""
    kg_app = typer.Typer(help="Compile and inspect knowledge graphs.", no_args_is_help=True)
    app.add_typer(kg_app, name="kg")
    kg_app.command("keywords", help=KEYWORDS_HELP)(keywords)

    flags = source_flags()

    def build(
        source: str | None = typer.Argument(None, help="File/folder, or 'builtin'."),
        fmt: str | None = typer.Option(
            None,
            "--format",
            "-f",
            help=f"Format of SOURCE: {', '.join(f.value for f in KGFormat)}.",
        ),
        add: list[str] | None = typer.Option(
            None, "--add", help="Another source: FORMAT[:PATH][#key=value,...] (repeatable)."
        ),
        out: Path = typer.Option(..., "--out", "-o", help="KG folder to write."),
        overwrite: bool = overwrite_option(),
        json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
        **given: Any,
    ) -> None:
        from termnorm._artifacts import prepare_output
        from termnorm.kg.build import build_kg_to_dir

        specs = [s for s in [_primary(source, fmt)] if s is not None]
        specs += [parse_add(a) for a in add or []]
        if not specs:
            raise ValueError("give a SOURCE with --format, or at least one --add")
        prepare_output(out, overwrite, {"source": [s.path for s in specs if s.path]}, "kg")
        specs = _with_flags(specs, flag_values(flags, given))
        card, _ = build_kg_to_dir(specs, out)
        if json_out:
            typer.echo(json.dumps({"out": str(out), **card}, indent=2, default=str))
        else:
            _print_summary(card, title=f"KG written to {out}")

    own = [p for p in inspect.signature(build).parameters.values() if p.kind is not p.VAR_KEYWORD]
    command = with_options(build, own, source_flag_params(flags))
    kg_app.command("build", help=BUILD_HELP, cls=PlainHelpCommand)(command)  # long flags wrap

    @kg_app.command("info")
    def info(
        kg_dir: Path = typer.Argument(..., help="KG folder written by 'termnorm kg build'."),
        json_out: bool = typer.Option(False, "--json", help="Print the card as JSON."),
    ) -> None:
        """Print a KG folder's card: sources, options, counts, load reports, fingerprint.

        Example: termnorm kg info kg/hpo
        """
        from termnorm._artifacts import read_card
        from termnorm.kg.graph import CARD_NAME

        card = read_card(kg_dir, CARD_NAME, "kg")
        if json_out:
            typer.echo(json.dumps(card, indent=2, default=str))
        else:
            _print_summary(card, title=str(kg_dir))

    @kg_app.command("split")
    def split(
        kg_dir: Path = typer.Argument(..., help="KG folder written by 'termnorm kg build'."),
        out: Path = typer.Option(..., "--out", "-o", help="Training KG folder to write."),
        test_fraction: float = typer.Option(
            0.2, "--test-fraction", help="Share of each relation label's triplets held out."
        ),
        seed: int = typer.Option(0, "--seed", help="Seed of the split."),
        overwrite: bool = overwrite_option(),
        json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Hold relation triplets out for link prediction: a training KG + the held-out edges.

        The training KG (same concepts and terms, fewer relations) goes to OUT, the held-out
        triplets to OUT/heldout_relations.parquet. Train on OUT, then rank the held-out edges:

          termnorm kg split kg/hpo --out kg/hpo_train

          termnorm train --kg kg/hpo_train --out models/coder

          termnorm eval linkpred --kg kg/hpo --model models/coder --triplets kg/hpo_train/heldout_relations.parquet
        """
        from termnorm._artifacts import prepare_output
        from termnorm.kg.graph import KnowledgeGraph
        from termnorm.kg.split import holdout_relations, save_heldout

        prepare_output(out, overwrite, {"KG_DIR": kg_dir}, "kg")
        train, heldout = holdout_relations(KnowledgeGraph.load(kg_dir), test_fraction, seed)
        train.save(out)
        result = {
            "out": str(out),
            "heldout": str(save_heldout(heldout, out)),
            "train_relations": len(train.relations),
            "heldout_relations": len(heldout),
        }
        if json_out:
            typer.echo(json.dumps(result, indent=2))
        else:
            for key, value in result.items():
                typer.echo(f"{key:18s} {value}")


def _print_summary(card: dict[str, Any], title: str) -> None:
    """A rich table: per source what was read, kept and dropped (each reason), then KG totals."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("", style="bold")
    table.add_column("item", overflow="fold")
    table.add_column("count", justify="right", no_wrap=True)
    for report in card.get("reports", []):
        table.add_row("source", f"[bold cyan]{report.get('source', '')}[/bold cyan]", "")
        for section in ("read", "kept", "dropped"):
            for item, count in _largest_first(report.get(section, {})):
                table.add_row(section, item, f"{count:,}")
        table.add_section()
    for item, count in card.get("counts", {}).items():
        table.add_row("KG", item, f"{int(count):,}")
    console = Console()
    console.print(table)
    console.print(f"fingerprint {card.get('fingerprint', '?')}  created {card.get('created', '?')}")


def _largest_first(counts: dict[str, Any]) -> list[tuple[str, int]]:
    """``(key, count)`` pairs, largest count first."""
    return sorted(((k, int(n)) for k, n in counts.items()), key=lambda kv: -kv[1])
