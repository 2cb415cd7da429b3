"""A batch job from a pipeline spec: what ``termnorm normalize --input`` and
``termnorm.normalize_file`` both run, so that both describe a resumable job the same way.

The job record (:mod:`termnorm.io.resumable`) holds the input file, the row options,
``spec.resolved().to_dict()`` and the matcher's own ``identity()``; with ``engine="ray"``
the workers build the matcher themselves (``functools.partial(build, spec)``), and the record
holds the spec and the index's identity (:func:`~termnorm.search.identity.index_identity`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.engines import Engine
from termnorm.io.tables import DEFAULT_ENCODING
from termnorm.search.batch import BatchReport, check_output
from termnorm.search.build import SynonymNotice, build, default_index_dir, load_index
from termnorm.search.spec import PipelineSpec

if TYPE_CHECKING:
    from termnorm.index.term_index import TermIndex
    from termnorm.mentions.synonyms import SynonymSources

__all__ = ["normalize_file_job", "ray_job_settings"]


def normalize_file_job(
    spec: PipelineSpec,
    input: str | Path,
    output: str | Path,
    *,
    index: TermIndex | None = None,
    synonyms: SynonymSources | None = None,
    engine: Engine | str = Engine.LOCAL,
    workers: int = 1,
    address: str | None = None,
    encoding: str = DEFAULT_ENCODING,
    errors: str = "strict",
    notice: SynonymNotice | None = None,
    **rows: Any,
) -> BatchReport:
    """Normalize ``input`` into ``output`` with the matcher of ``spec`` (``index``: an
    already loaded index instead of ``spec.index``; ``synonyms``: more domain synonyms, e.g.
    pairs, recorded through the matcher's identity). ``rows``: the row options of
    :func:`~termnorm.search.batch.normalize_file` (``column``, ``k``, ``context``, ...).
    ``engine="ray"`` runs ``workers`` Ray actors (on the cluster at ``address``), each
    loading the index folder once; ``encoding``/``errors`` decode local text files."""
    input, output = Path(input), Path(output)
    if Engine(engine) is Engine.RAY:
        from termnorm.search.ray_batch import import_ray, normalize_file_ray

        import_ray()  # MissingExtraError before any work
        spec, settings = ray_job_settings(spec, index)
        return normalize_file_ray(
            functools.partial(build, spec, synonyms=synonyms),
            input,
            output,
            workers=workers,
            address=address,
            settings=settings,
            multi=spec.multi,
            **rows,
        )
    from termnorm.search.batch import normalize_file

    check_output(input, output)  # before the index loads
    matcher = build(spec, index, synonyms=synonyms, notice=notice)
    return normalize_file(
        matcher,
        input,
        output,
        settings=spec.resolved().to_dict(),
        encoding=encoding,
        errors=errors,
        **rows,
    )


def ray_job_settings(
    spec: PipelineSpec, index: TermIndex | None = None
) -> tuple[PipelineSpec, dict[str, Any]]:
    """``spec`` with its index folder resolved (``index``: an already loaded index, which must
    have a folder), as Ray workers build their matcher from it, and what a Ray job records of
    it: ``spec.resolved().to_dict()`` and the index's identity
    (:func:`~termnorm.search.identity.index_identity`)."""
    from termnorm.search.identity import index_identity

    if index is not None and index.path is None:
        raise ValueError("engine='ray' needs an index saved to a folder: each worker loads it")
    folder = index.path if index is not None and index.path else spec.index
    folder = Path(folder or default_index_dir()).resolve()
    spec = spec.replace(index=folder)
    return spec, {
        **spec.resolved().to_dict(),
        "index_identity": index_identity(load_index(folder)),
    }
