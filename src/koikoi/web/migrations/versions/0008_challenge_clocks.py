"""A challenge to a bot carries a time control, as a seek does (issue 32, items 1 and 6).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05

One nullable column, ``challenges.clock``: the time control the challenger chose (koikoi.clocks),
given to the game when the bot accepts; NULL is no clock, as every challenge made before had.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("challenges", sa.Column("clock", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("challenges") as batch:
        batch.drop_column("clock")
