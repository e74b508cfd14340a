"""Accounts and their sessions (issue 31: playing strangers needs a name that others see).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-04

Two new tables, nothing else touched: ``accounts`` (a name unique ignoring case, an Argon2id hash, the
wrong passwords counted for the limit on guessing) and ``sessions`` (the SHA-256 of each signed-in
browser's token). A guest's games become an account's by their seats' ``owner``, which needs no column.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _moment() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(20), nullable=False),
        sa.Column("name_key", sa.String(20), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("created", _moment(), nullable=False),
        sa.Column("disabled", _moment(), nullable=True),
        sa.Column("failed_logins", sa.Integer(), nullable=False),
        sa.Column("failed_since", _moment(), nullable=True),
    )
    op.create_table(
        "sessions",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("created", _moment(), nullable=False),
        sa.Column("seen", _moment(), nullable=False),
    )
    op.create_index("ix_sessions_account_id", "sessions", ["account_id"])


def downgrade() -> None:
    op.drop_index("ix_sessions_account_id", table_name="sessions")
    op.drop_table("sessions")
    op.drop_table("accounts")
