"""The model-selection grid of Xu & Bethard 2021 (table 4): trained models × search strategies.

For every model (an index of the ontology under that model's encoder, e.g. Train:O and
Train:OD), every dataset (dev mentions + the training mentions used as domain synonyms D) and
every strategy (the paper's 14: six modules, eight sieves), acc@1 is measured with
:class:`~termnorm.evaluation.normalization.NormalizationEvaluator` under two rules for
composite mentions ("breast and ovarian cancer"):

* **simple**: the whole text's top-1 concept matches any of its gold IDs;
* **parts** (the paper's): every part of the text (split by
  :func:`~termnorm.mentions.composite.split_composite` or the dataset's own parts) has a
  top-1 concept matching a gold ID.

Simple mentions count the same under both; unlinkable ones are left out. Within each model's
block the strategies are ranked per dataset (1 = best; ties share the mean of their ranks) on
the *parts* figure, and the ranks averaged over the datasets ("Avg. rank"), as in the paper.
The ontology vectors are computed once per model; domain synonyms and queries are encoded once
per model and dataset (a :class:`~termnorm.encoders.MemoEncoder`), so the 14 strategies
cost 14 searches.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from termnorm.encoders.memo import MemoEncoder
from termnorm.evaluation.normalization import NormalizationEvaluator
from termnorm.index.term_index import TermIndex
from termnorm.mentions import Mention
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD
from termnorm.search.domain import SearchSpace
from termnorm.search.space_matcher import build_strategy
from termnorm.search.strategies import PAPER_STRATEGIES, StrategySpec

if TYPE_CHECKING:
    from termnorm.encoders import TermEncoder

__all__ = [
    "PAPER_TABLE4",
    "GridCell",
    "GridDataset",
    "GridResult",
    "average_ranks",
    "grid_markdown",
    "run_sieve_grid",
]

logger = logging.getLogger(__name__)


@dataclass
class GridDataset:
    """Dev mentions to score, and the training mentions searched as domain synonyms (D)."""

    name: str
    mentions: list[Mention]
    synonyms: list[tuple[str, tuple[str, ...]]]


@dataclass(frozen=True)
class GridCell:
    """acc@1 of one (model, strategy, dataset) under both composite rules."""

    simple: float
    parts: float
    n: int


@dataclass
class GridResult:
    """Cells keyed ``(model, strategy, dataset)``, with the order of each axis."""

    models: list[str]
    strategies: list[str]
    datasets: list[str]
    cells: dict[tuple[str, str, str], GridCell] = field(default_factory=dict)
    threshold: float = DEFAULT_SIEVE_THRESHOLD

    def ranks(self, model: str) -> dict[str, float]:
        """Average rank of each strategy within ``model``'s block (parts rule)."""
        table = {
            s: [self.cells[(model, s, d)].parts for d in self.datasets] for s in self.strategies
        }
        return average_ranks(table)


def average_ranks(scores: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Per column, rank rows by descending score (ties: mean rank); average over columns."""
    names = list(scores)
    if not names:
        return {}
    columns = len(next(iter(scores.values())))
    total = dict.fromkeys(names, 0.0)
    for col in range(columns):
        values = {n: round(scores[n][col], 10) for n in names}
        for name in names:
            better = sum(v > values[name] for v in values.values())
            equal = sum(v == values[name] for v in values.values())
            total[name] += better + (equal + 1) / 2
    return {n: total[n] / max(columns, 1) for n in names}


def _cell(metrics: Mapping[str, float]) -> GridCell:
    simple_n, comp_n = metrics["normalize_n_simple"], metrics["normalize_n_composite"]
    n = simple_n + comp_n
    acc = metrics["normalize_acc@1"] * simple_n
    any_rule = metrics.get("normalize_composite_acc@1", 0.0) * comp_n
    parts_rule = metrics.get("normalize_composite_parts_acc@1", 0.0) * comp_n
    return GridCell((acc + any_rule) / n, (acc + parts_rule) / n, int(n))


def run_sieve_grid(
    models: Mapping[str, tuple[TermIndex, TermEncoder]],
    datasets: Sequence[GridDataset],
    strategies: Sequence[StrategySpec] = PAPER_STRATEGIES,
    threshold: float = DEFAULT_SIEVE_THRESHOLD,
) -> GridResult:
    """acc@1 of every model × strategy × dataset (see the module docstring)."""
    result = GridResult(
        list(models), [str(s) for s in strategies], [d.name for d in datasets], {}, threshold
    )
    for model, (index, encoder) in models.items():
        SearchSpace(index, encoder)  # refuses an encoder other than the index's
        cached = MemoEncoder(encoder)
        for data in datasets:
            space, report = SearchSpace(index, cached).with_synonyms(data.synonyms)
            logger.info("%s / %s: domain synonyms %s", model, data.name, report.to_dict())
            evaluator = NormalizationEvaluator(data.mentions, ks=(1,))
            for spec in strategies:
                metrics = evaluator(build_strategy(space, spec, threshold))
                cell = _cell(metrics)
                result.cells[(model, str(spec), data.name)] = cell
                logger.info(
                    "%s %s %s: simple %.4f parts %.4f",
                    model,
                    spec,
                    data.name,
                    cell.simple,
                    cell.parts,
                )
    return result


# Xu & Bethard 2021, table 4 (dev acc@1, PubMed-BERT triplet networks, composite mentions by
# the parts rule): (NCBI, BC5CDR-D, average rank over their five corpora)
PAPER_TABLE4: dict[tuple[str, str], tuple[float, float, float]] = {
    ("O", "o-t"): (83.74, 82.65, 10.2),
    ("O", "o-c"): (85.01, 82.43, 12.0),
    ("O", "d-t"): (85.39, 77.29, 12.6),
    ("O", "d-c"): (85.26, 75.18, 13.6),
    ("O", "od-t"): (89.58, 88.87, 4.8),
    ("O", "od-c"): (88.56, 85.85, 9.4),
    ("O", "d-t+o-t"): (90.34, 89.66, 3.6),
    ("O", "d-t+o-c"): (89.96, 89.40, 5.0),
    ("O", "d-c+o-t"): (86.28, 83.72, 7.4),
    ("O", "d-c+o-c"): (88.56, 83.51, 9.8),
    ("O", "d-t+od-t"): (91.36, 90.50, 2.0),
    ("O", "d-t+od-c"): (90.85, 89.90, 3.6),
    ("O", "d-c+od-t"): (91.99, 89.47, 3.2),
    ("O", "d-c+od-c"): (88.82, 86.93, 7.6),
    ("OD", "o-t"): (89.58, 87.82, 9.8),
    ("OD", "o-c"): (91.36, 89.85, 9.6),
    ("OD", "d-t"): (86.40, 79.01, 13.2),
    ("OD", "d-c"): (86.40, 78.41, 13.4),
    ("OD", "od-t"): (91.11, 90.38, 8.2),
    ("OD", "od-c"): (91.61, 89.92, 7.8),
    ("OD", "d-t+o-t"): (91.25, 91.10, 4.0),
    ("OD", "d-t+o-c"): (91.49, 90.88, 6.4),
    ("OD", "d-c+o-t"): (92.25, 90.71, 4.0),
    ("OD", "d-c+o-c"): (91.49, 90.47, 7.8),
    ("OD", "d-t+od-t"): (91.61, 91.22, 2.4),
    ("OD", "d-t+od-c"): (91.61, 90.83, 5.2),
    ("OD", "d-c+od-t"): (92.25, 90.95, 3.4),
    ("OD", "d-c+od-c"): (91.61, 90.55, 5.8),
}


def grid_markdown(result: GridResult, paper_group: Mapping[str, str] | None = None) -> str:
    """The grid as a Markdown table: ours (simple | parts per dataset, avg rank) beside the
    paper's figures; ``paper_group`` maps a model label to the paper's Train group (O, OD).
    The best parts figure of each block and dataset is in bold."""
    paper_group = dict(paper_group or {})
    head = ["Train", "Search"]
    for d in result.datasets:
        head += [f"{d} simple", f"{d} parts"]
    head += ["Avg. rank", "paper NCBI", "paper BC5CDR-D", "paper avg. rank (2 sets)"]
    head += ["paper avg. rank (5 sets)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for model in result.models:
        ranks = result.ranks(model)
        group = paper_group.get(model)
        best = {
            d: max(result.cells[(model, s, d)].parts for s in result.strategies)
            for d in result.datasets
        }
        paper_ranks = (
            average_ranks({s: PAPER_TABLE4[(group, s)][:2] for s in result.strategies})
            if group is not None and all((group, s) in PAPER_TABLE4 for s in result.strategies)
            else {}
        )
        for s in result.strategies:
            row = [model, s.upper().replace("+", " + ")]
            for d in result.datasets:
                cell = result.cells[(model, s, d)]
                parts = f"{100 * cell.parts:.2f}"
                row += [
                    f"{100 * cell.simple:.2f}",
                    f"**{parts}**" if cell.parts == best[d] else parts,
                ]
            row.append(f"{ranks[s]:.1f}")
            fig = PAPER_TABLE4.get((group or "", s))
            if fig is None:
                row += ["–"] * 4
            else:
                row += [f"{fig[0]:.2f}", f"{fig[1]:.2f}", f"{paper_ranks[s]:.1f}", f"{fig[2]:.1f}"]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"
