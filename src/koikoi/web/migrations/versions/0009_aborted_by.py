"""Who aborted a game (issue 43, item 2): a player who aborts often waits before seeking again.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-06

One nullable column, ``games.aborted_by``: the seat that aborted the game (or resigned before both had
moved, or let their first move's time run out); NULL for every other game, and for every game aborted
before this column existed (nobody is held to those).
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("games", sa.Column("aborted_by", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("aborted_by")
