"""Mapping projects: a code list mapped, reviewed and exported (SQLite or PostgreSQL store,
append-only decisions, learned synonyms, SSSOM / OMOP / CSV / Usagi exports, Usagi import).

>>> from termnorm import projects, api
>>> projects.init_project("labs", "codes.csv", code_column="code", text_column="name",
...                       settings=projects.PipelineSettings.of(index="idx/loinc"))
>>> projects.run_project("labs", api.project_matcher)        # or: termnorm map run labs
>>> projects.decide("labs", "GLU1", "approve", reviewer="ann")
>>> projects.add_reviewer("labs", "bob").token    # the review page: termnorm serve --project
>>> projects.export("labs", "sssom", "labs.sssom.tsv")

Names resolve lazily (the CLI reads :mod:`termnorm.projects.states` without SQLAlchemy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

__all__ = [
    "Action",
    "ApplyReport",
    "AutoApproveReport",
    "DecisionRecord",
    "ExportFormat",
    "ExportReport",
    "InitReport",
    "LeasedRow",
    "MatcherBuilder",
    "NewReviewer",
    "PipelineSettings",
    "Predicate",
    "ProjectStatus",
    "QueueEntry",
    "RowState",
    "RowView",
    "RunReport",
    "UsagiImportReport",
    "acquire",
    "acquire_next",
    "add_reviewer",
    "apply_source",
    "auto_approve",
    "decide",
    "decide_leased",
    "export",
    "import_usagi",
    "init_project",
    "list_reviewers",
    "open_store",
    "release",
    "remove_reviewer",
    "review_queue",
    "run_project",
    "show_row",
    "status",
    "train_project_ranker",
]

_MODULES = {
    "states": ("Action", "ExportFormat", "Predicate", "RowState"),
    "settings": ("PipelineSettings", "MatcherBuilder"),
    "init": ("InitReport", "init_project"),
    "run": ("RunReport", "run_project"),
    "decisions": ("AutoApproveReport", "DecisionRecord", "auto_approve", "decide"),
    "overview": ("ProjectStatus", "status"),
    "exports": ("ExportReport", "export"),
    "apply": ("ApplyReport", "apply_source"),
    "store": ("open_store",),
    "rows": ("QueueEntry", "RowView", "review_queue", "show_row"),
    "leases": ("LeasedRow", "acquire", "acquire_next", "decide_leased", "release"),
    "reviewers": ("NewReviewer", "add_reviewer", "list_reviewers", "remove_reviewer"),
    "training_data": ("train_project_ranker",),
    "usagi_import": ("UsagiImportReport", "import_usagi"),
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _MODULES.items() for n in names})

if TYPE_CHECKING:
    from termnorm.projects.apply import ApplyReport, apply_source
    from termnorm.projects.decisions import AutoApproveReport, DecisionRecord, auto_approve, decide
    from termnorm.projects.exports import ExportReport, export
    from termnorm.projects.init import InitReport, init_project
    from termnorm.projects.leases import LeasedRow, acquire, acquire_next, decide_leased, release
    from termnorm.projects.overview import ProjectStatus, status
    from termnorm.projects.reviewers import (
        NewReviewer,
        add_reviewer,
        list_reviewers,
        remove_reviewer,
    )
    from termnorm.projects.rows import QueueEntry, RowView, review_queue, show_row
    from termnorm.projects.run import RunReport, run_project
    from termnorm.projects.settings import MatcherBuilder, PipelineSettings
    from termnorm.projects.states import Action, ExportFormat, Predicate, RowState
    from termnorm.projects.store import open_store
    from termnorm.projects.training_data import train_project_ranker
    from termnorm.projects.usagi_import import UsagiImportReport, import_usagi
