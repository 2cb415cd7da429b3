"""Reviewers of the review page: a name and the SHA-256 of their token, per project.

Revision ID: 0002_reviewers
Revises: 0001_initial
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_reviewers"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the reviewer table."""
    op.create_table(
        "reviewer",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["project.id"],
            name="fk_reviewer_project_id_project",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_reviewer"),
        sa.UniqueConstraint("project_id", "name", name="uq_reviewer_project_name"),
        sa.UniqueConstraint("token_sha256", name="uq_reviewer_token_sha256"),
    )


def downgrade() -> None:
    """Drop the reviewer table."""
    op.drop_table("reviewer")
