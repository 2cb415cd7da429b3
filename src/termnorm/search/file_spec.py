"""A normalize-file job as one object: what ``termnorm normalize --input``,
``termnorm.normalize_file``, the service's ``POST /v1/normalize/file``, the local engine
(:func:`termnorm.search.batch.normalize_file`) and the Ray engine
(:func:`termnorm.search.ray_batch.normalize_file_ray`) all pass.

:class:`NormalizeFileSpec` embeds the search (:class:`~termnorm.search.spec.PipelineSpec`)
and the rows asked for (:class:`RowOptions`, which each run resolves against its input into a
:class:`~termnorm.search.batch.RowSpec`), beside the file's own settings: where it is read and
written, how it is decoded, resumed, chunked and on which engine. A setting is a field here
once; the faces build the spec, the engines read it.
"""

from __future__ import annotations

# opt() returns a dataclasses.Field, as field() does
# ruff: noqa: RUF009
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termnorm.engines import Engine
from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors
from termnorm.io.lines import check_encoding
from termnorm.mentions.abbreviations import AbbreviationMode, parse_abbreviation_mode
from termnorm.options import opt
from termnorm.search.context import ExpansionChoice
from termnorm.search.spec import PipelineSpec

__all__ = ["DEFAULT_CHUNK_ROWS", "ENGINE_HELP", "NormalizeFileSpec", "RowOptions"]

DEFAULT_CHUNK_ROWS = 4096
ENGINE_HELP = (
    "local: this process, resumable chunk by chunk; ray: a pool of Ray actors (--workers), "
    "each loading the index once, writing one Parquet part per input partition into the "
    "--output folder (needs the ray extra and Parquet input)."
)


@dataclass(frozen=True)
class RowOptions:
    """The rows a caller asks for: the text ``column`` (``None``: the one named like a text,
    else the only one), the top-``k`` per row, the ``context_column`` holding each row's
    document (``None``: ``document`` or ``context`` when present), the ``abbreviations`` mode
    (``None``: ab3p when there is a context column), the ``choice`` between expanded and
    original text, and the ``prefix`` of the added columns."""

    column: str | None = opt(
        None, "Text column of --input. Default: the one named text/term/mention, or the only one."
    )
    k: int = opt(1, "Concepts per row.", min=1)
    context_column: str | None = opt(
        None,
        "Column of --input holding each row's document text (default: 'document' or "
        "'context' when present).",
    )
    abbreviations: AbbreviationMode | None = opt(
        None,
        "ab3p: expand the short forms each row's document defines; none: do not. "
        "Default: ab3p when --input has a context column, none otherwise.",
    )
    choice: ExpansionChoice | None = None
    prefix: str | None = opt(
        None,
        "Prefix of the added columns (e.g. termnorm_), needed when --input already has "
        "columns of those names.",
    )

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if self.abbreviations is not None:
            mode = parse_abbreviation_mode(self.abbreviations)
            object.__setattr__(self, "abbreviations", mode)


@dataclass(frozen=True)
class NormalizeFileSpec:
    """One normalize-file job: ``input`` normalized into ``output`` by the search ``pipeline``
    with the ``rows`` asked for; text files decoded with ``encoding`` and ``errors``; an
    interrupted run resumed unless ``restart``; ``chunk_rows`` rows written at a time (a Ray
    partition's rows); a progress bar when ``show_progress``; run by ``engine`` (``ray``:
    ``workers`` actors, on the cluster at ``ray_address`` when given).

    Values are checked and coerced here, before any work: enums from their names, paths from
    strings, ``encoding`` a text encoding, ``chunk_rows`` and ``workers`` at least 1 (a
    ``ValueError`` naming the option). The fields carry their help: ``termnorm normalize``
    generates its file options from them."""

    input: Path
    output: Path
    pipeline: PipelineSpec = field(default_factory=PipelineSpec)
    rows: RowOptions = RowOptions()
    encoding: str = opt(DEFAULT_ENCODING, "Encoding of a CSV/TSV/JSONL --input (e.g. latin-1).")
    errors: DecodeErrors = opt(
        DecodeErrors.STRICT,
        "Undecodable bytes in --input: strict stops at their file:line; replace keeps the row "
        "with U+FFFD in their place.",
    )
    restart: bool = opt(False, "Drop an interrupted run's chunks and start over.", "--restart")
    chunk_rows: int = opt(DEFAULT_CHUNK_ROWS, "Rows per written chunk (per Ray partition).", min=1)
    show_progress: bool = True
    engine: Engine = opt(Engine.LOCAL, ENGINE_HELP)
    workers: int = opt(1, "Ray actors (--engine ray).", min=1)
    ray_address: str | None = opt(
        None,
        "A running Ray cluster (e.g. ray://head:10001 or auto) instead of a local Ray; "
        "input, output and index must be on a file system every node sees.",
    )

    def __post_init__(self) -> None:
        for name, kind in (("input", Path), ("output", Path)):
            object.__setattr__(self, name, kind(getattr(self, name)))
        for name, enum in (("errors", DecodeErrors), ("engine", Engine)):
            object.__setattr__(self, name, enum(getattr(self, name)))
        check_encoding(self.encoding)
        if self.chunk_rows < 1:
            raise ValueError(f"chunk_rows must be at least 1, got {self.chunk_rows}")
        if self.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {self.workers}")

    @classmethod
    def of(cls, input: str | Path, output: str | Path, **options: Any) -> NormalizeFileSpec:
        """The spec of flat keywords, as the faces take them: the fields of
        :class:`RowOptions` and of this class (``None`` keeps a field's default); an unknown
        keyword is a ``TypeError`` naming it."""
        given = {name: value for name, value in options.items() if value is not None}
        row_names = {f.name for f in dataclasses.fields(RowOptions)}
        rows = RowOptions(**{n: v for n, v in given.items() if n in row_names})
        rest = {n: v for n, v in given.items() if n not in row_names}
        return cls(Path(input), Path(output), rows=rows, **rest)
