"""Spectators and chat: private games, the spectators each process holds, a game's chat, mutes, reports.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06

Five new tables and one nullable column, nothing else touched: ``private_games`` (a casual game nobody
may watch), ``watchers`` (how many spectators each server process holds on a game), ``chat_messages`` (a
game's two chat rooms), ``chat_mutes`` (a player who muted the other) and ``chat_reports`` (a message
reported to the moderators); ``seeks.private`` carries a casual seek's privacy to the game it leads to.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _moment() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("seeks", sa.Column("private", sa.Boolean(), nullable=True))
    op.create_table(
        "private_games",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("since", _moment(), nullable=False),
    )
    op.create_table(
        "watchers",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("process", sa.String(32), primary_key=True),
        sa.Column("spectators", sa.Integer(), nullable=False),
        sa.Column("seen", _moment(), nullable=False),
    )
    op.create_table(
        "chat_messages",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), nullable=False, index=True),
        sa.Column("room", sa.String(16), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("author", sa.String(64), nullable=False),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("phrase", sa.String(32), nullable=True),
        sa.Column("at", _moment(), nullable=False),
    )
    op.create_table(
        "chat_mutes",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("at", _moment(), nullable=False),
    )
    op.create_table(
        "chat_reports",
        sa.Column("message_id", sa.Integer(), sa.ForeignKey("chat_messages.id"), primary_key=True),
        sa.Column("reporter", sa.String(64), primary_key=True),
        sa.Column("reporter_name", sa.String(64), nullable=False),
        sa.Column("at", _moment(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("chat_reports")
    op.drop_table("chat_mutes")
    op.drop_table("chat_messages")
    op.drop_table("watchers")
    op.drop_table("private_games")
    with op.batch_alter_table("seeks") as batch:
        batch.drop_column("private")
