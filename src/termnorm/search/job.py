"""A normalize-file job run from its :class:`~termnorm.search.file_spec.NormalizeFileSpec`:
what ``termnorm normalize --input`` and ``termnorm.normalize_file`` both run, so that both
describe a resumable job the same way.

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
from termnorm.search.batch import BatchReport, check_output
from termnorm.search.build import SynonymNotice, build, default_index_dir, load_index
from termnorm.search.file_spec import NormalizeFileSpec
from termnorm.search.spec import PipelineSpec

if TYPE_CHECKING:
    from termnorm.index.term_index import TermIndex
    from termnorm.mentions.synonyms import SynonymSources

__all__ = ["normalize_file_job", "ray_job_settings"]


def normalize_file_job(
    job: NormalizeFileSpec,
    *,
    index: TermIndex | None = None,
    synonyms: SynonymSources | None = None,
    notice: SynonymNotice | None = None,
) -> BatchReport:
    """Run ``job`` with the matcher of ``job.pipeline`` (``index``: an already loaded index
    instead of the pipeline's; ``synonyms``: more domain synonyms, e.g. pairs, recorded through
    the matcher's identity; ``notice``: told what each synonym file added). ``engine="ray"``
    runs ``job.workers`` Ray actors, each loading the index folder once."""
    if job.engine is Engine.RAY:
        from termnorm.search.ray_batch import import_ray, normalize_file_ray

        import_ray()  # MissingExtraError before any work
        spec, settings = ray_job_settings(job.pipeline, index)
        factory = functools.partial(build, spec, synonyms=synonyms)
        return normalize_file_ray(factory, job, settings, multi=spec.multi)
    from termnorm.search.batch import normalize_file

    check_output(job.input, job.output)  # before the index loads
    matcher = build(job.pipeline, index, synonyms=synonyms, notice=notice)
    return normalize_file(matcher, job, job.pipeline.resolved().to_dict())


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
