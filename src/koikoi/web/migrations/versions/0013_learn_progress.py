"""Lessons (issue 46): how far an account has come through /learn.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07

One new table, ``learn_progress``: for each account and lesson, the most stars earned (1 to 3) and when.
A guest's progress stays in their browser.
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "learn_progress",
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("lesson", sa.String(24), primary_key=True),
        sa.Column("stars", sa.Integer(), nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("learn_progress")
