"""Clocks, games that end before their last hand, presence at the table, rematches.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05

- ``clocks``: a game's time control and the state of its clock (koikoi.clocks, koikoi.web.tablestore);
  only games played with a clock have a row.
- ``games.ending`` and ``games.winner``: how a game ended that did not end with its last hand (a player
  ran out of time, resigned, aborted, had victory claimed against them; an invitation that expired, a
  casual game closed after 30 days without a move), and who won it (none for the last three).
- ``games.rematch_offer`` and ``games.rematch``: the seat that offered a rematch, and the rematch's id.
- ``seats.away_since``, ``seats.away_closed``, ``seats.present_on``: whether the seat's player is at the
  table (the process holding their socket) or since when they are away, and whether they closed the tab.
- ``server_beats``: each server process's last sign of life, so that a player is never flagged for the
  server's own outage and a dead process's sockets count as gone.
- ``seeks.clock``: the time control of an open seek.
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "clocks",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("control", sa.String(16), nullable=False),
        sa.Column("on_time", sa.String(16), nullable=False),
        sa.Column("bank0", sa.Float(), nullable=False),
        sa.Column("bank1", sa.Float(), nullable=False),
        sa.Column("turn_started", sa.Float(), nullable=True),
        sa.Column("deadline", sa.Float(), nullable=True, index=True),
        sa.Column("flagged", sa.Float(), nullable=True),
    )
    op.create_table(
        "server_beats",
        sa.Column("process", sa.String(32), primary_key=True),
        sa.Column("seen", sa.Float(), nullable=False),
    )
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("ending", sa.String(16), nullable=True))
        batch.add_column(sa.Column("winner", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("rematch_offer", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("rematch", sa.String(32), nullable=True))
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("away_since", sa.Float(), nullable=True))
        batch.add_column(sa.Column("away_closed", sa.Boolean(), nullable=True))
        batch.add_column(sa.Column("present_on", sa.String(32), nullable=True))
    with op.batch_alter_table("seeks") as batch:
        batch.add_column(sa.Column("clock", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seeks") as batch:
        batch.drop_column("clock")
    with op.batch_alter_table("seats") as batch:
        for name in ("present_on", "away_closed", "away_since"):
            batch.drop_column(name)
    with op.batch_alter_table("games") as batch:
        for name in ("rematch", "rematch_offer", "winner", "ending"):
            batch.drop_column(name)
    op.drop_table("server_beats")
    op.drop_table("clocks")
