"""The public lobby: open seeks and quick-pairing entries.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-05

One new table, nothing else touched: ``seeks`` (koikoi.web.lobby), an open seek listed in the lobby or a
player waiting in a quick-pairing pool, and once paired the game it led to.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _moment() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "seeks",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(64), nullable=False, index=True),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("pool", sa.String(16), nullable=True, index=True),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("provisional", sa.Boolean(), nullable=False),
        sa.Column("created", _moment(), nullable=False),
        sa.Column("seen", _moment(), nullable=False),
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), nullable=True, index=True),
        sa.Column("token", sa.String(64), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("seeks")
