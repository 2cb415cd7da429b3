"""``termnorm kg keywords``: mine a keyword vocabulary (sites, types) from KG folders.

Registered into the ``kg`` group by :mod:`termnorm.cli.kg_cmd`; the mining code loads when
the command runs.
"""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["KEYWORDS_HELP", "register"]

KEYWORDS_HELP = """Mine a keyword vocabulary (site and type keywords) from KG folders, for the keyword-attentive ranker (termnorm rank train --keywords FILE).

--lang en: sites from HPO's organ-system branches and 'Abnormality of X' / 'Abnormal X morphology' names, types from the head words of disease names (MEDIC, HPO). --lang zh: Chinese procedure sites and types from the zh names of a procedure KG (icd9procs). The method: termnorm.kg.keyword_mining.

Examples:

  termnorm kg keywords --kg kg/hpo --kg kg/medic --lang en --out keywords_en.tsv

  termnorm kg keywords --kg kg/icd9procs --lang zh --out keywords_zh_procedures.tsv
"""


def register(kg_app: typer.Typer) -> None:
    """Attach ``keywords`` to the ``kg`` sub-app."""

    @kg_app.command("keywords", help=KEYWORDS_HELP)
    def keywords(
        kg: list[Path] = typer.Option(..., "--kg", exists=True, help="KG folder; repeatable."),
        lang: str = typer.Option(
            ..., "--lang", help="en (diseases, phenotypes) or zh (procedures)."
        ),
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
