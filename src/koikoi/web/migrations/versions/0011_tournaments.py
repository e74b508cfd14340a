"""Tournaments (issue 45): arenas and Swiss events, their players and their matches.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07

Three new tables: ``tournaments`` (the event, its settings, its state and the lease of the process that
directs it), ``tournament_players`` (each player's standing) and ``tournament_games`` (each match or Swiss
bye, and what it scored once counted); and the chat keeps a tournament's room too: ``chat_messages``
gets a nullable ``tournament_id``, and its ``game_id`` may be NULL (a tournament's message has no game).
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def _moment() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("created_by", sa.String(32), sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("schedule", sa.String(96), nullable=True, unique=True),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("clock", sa.String(16), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("bots", sa.Boolean(), nullable=False),
        sa.Column("berserk", sa.Boolean(), nullable=False),
        sa.Column("min_moves", sa.Integer(), nullable=False),
        sa.Column("access", sa.String(8), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=True),
        sa.Column("starts", _moment(), nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=True),
        sa.Column("grace", sa.Integer(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=True),
        sa.Column("round_every", sa.Integer(), nullable=True),
        sa.Column("late", sa.String(8), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("round_started", _moment(), nullable=True),
        sa.Column("ended", _moment(), nullable=True),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("director", sa.String(32), nullable=True),
        sa.Column("lease_until", sa.Float(), nullable=True),
        sa.Column("created", _moment(), nullable=False),
    )
    op.create_table(
        "tournament_players",
        sa.Column("tournament_id", sa.String(32), sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("name", sa.String(20), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("bot", sa.Boolean(), nullable=False),
        sa.Column("joined", _moment(), nullable=False),
        sa.Column("joined_round", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("streak", sa.Integer(), nullable=False),
        sa.Column("opponent_ratings", sa.Float(), nullable=False),
        sa.Column("berserks", sa.Integer(), nullable=False),
        sa.Column("aborts", sa.Integer(), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("seen", _moment(), nullable=False),
        sa.Column("waiting_since", sa.Float(), nullable=True),
        sa.Column("game_id", sa.String(32), nullable=True),
        sa.Column("last_opponent", sa.String(32), nullable=True),
    )
    op.create_table(
        "tournament_games",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("tournament_id", sa.String(32), sa.ForeignKey("tournaments.id"), nullable=False, index=True),
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), nullable=True, unique=True),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("account0", sa.String(32), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("account1", sa.String(32), sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("berserk0", sa.Boolean(), nullable=False),
        sa.Column("berserk1", sa.Boolean(), nullable=False),
        sa.Column("result0", sa.Float(), nullable=True),
        sa.Column("points0", sa.Integer(), nullable=True),
        sa.Column("points1", sa.Integer(), nullable=True),
        sa.Column("started", _moment(), nullable=False),
        sa.Column("counted", _moment(), nullable=True, index=True),
    )
    with op.batch_alter_table("chat_messages") as batch:  # SQLite makes the table again, without NOT NULL
        batch.alter_column("game_id", existing_type=sa.String(32), nullable=True)
    # Added outside the batch: a batch would want the foreign key named, and metadata leaves it unnamed (as
    # PostgreSQL then names it itself). SQLite adds a nullable column with its REFERENCES in place, which
    # Alembic's add_column does not write for it.
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE chat_messages ADD COLUMN tournament_id VARCHAR(32) REFERENCES tournaments (id)")
    else:
        op.add_column("chat_messages", sa.Column("tournament_id", sa.String(32), sa.ForeignKey("tournaments.id")))
    op.create_index("ix_chat_messages_tournament_id", "chat_messages", ["tournament_id"])


def downgrade() -> None:
    op.execute("DELETE FROM chat_reports WHERE message_id IN (SELECT id FROM chat_messages WHERE game_id IS NULL)")
    op.execute("DELETE FROM chat_messages WHERE game_id IS NULL")
    op.drop_index("ix_chat_messages_tournament_id", "chat_messages")
    with op.batch_alter_table("chat_messages") as batch:
        if op.get_bind().dialect.name == "postgresql":  # SQLite's table is made again without the column
            batch.drop_constraint("chat_messages_tournament_id_fkey", type_="foreignkey")
        batch.drop_column("tournament_id")
        batch.alter_column("game_id", existing_type=sa.String(32), nullable=False)
    op.drop_table("tournament_games")
    op.drop_table("tournament_players")
    op.drop_table("tournaments")
