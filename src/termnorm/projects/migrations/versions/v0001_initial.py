"""The first project schema: project, source_row, candidate, decision, lease.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the five tables."""
    op.create_table(
        "project",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("source", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_project"),
        sa.UniqueConstraint("name", name="uq_project_name"),
    )
    op.create_table(
        "source_row",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(400), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("frequency", sa.Float(), nullable=True),
        sa.Column("context", sa.JSON(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("retired", sa.Boolean(), nullable=False),
        sa.Column("map_error", sa.Text(), nullable=True),
        sa.Column("decision_id", sa.Integer(), nullable=True),
        sa.Column("updated_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["project.id"],
            name="fk_source_row_project_id_project",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_source_row"),
        sa.UniqueConstraint("project_id", "code", name="uq_source_row_project_code"),
    )
    op.create_index("ix_source_row_project_state", "source_row", ["project_id", "state"])
    op.create_table(
        "candidate",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("row_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("concept_id", sa.String(200), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("matched_text", sa.Text(), nullable=True),
        sa.Column("source", sa.String(100), nullable=True),
        sa.Column("term_source", sa.String(200), nullable=True),
        sa.Column("score", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["row_id"],
            ["source_row.id"],
            name="fk_candidate_row_id_source_row",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_candidate"),
        sa.UniqueConstraint("row_id", "rank", name="uq_candidate_row_rank"),
    )
    op.create_table(
        "decision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("row_id", sa.Integer(), nullable=False),
        sa.Column("row_version", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("concept_id", sa.String(200), nullable=True),
        sa.Column("concept_name", sa.Text(), nullable=True),
        sa.Column("predicate", sa.String(10), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("replaces_decision_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["project.id"],
            name="fk_decision_project_id_project",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["row_id"],
            ["source_row.id"],
            name="fk_decision_row_id_source_row",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["replaces_decision_id"],
            ["decision.id"],
            name="fk_decision_replaces_decision_id_decision",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_decision"),
    )
    op.create_index("ix_decision_row", "decision", ["row_id"])
    op.create_table(
        "lease",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("row_id", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("expires_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["row_id"], ["source_row.id"], name="fk_lease_row_id_source_row", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_lease"),
        sa.UniqueConstraint("row_id", name="uq_lease_row_id"),
    )


def downgrade() -> None:
    """Drop the five tables."""
    for table in ("lease", "decision", "candidate", "source_row", "project"):
        op.drop_table(table)
