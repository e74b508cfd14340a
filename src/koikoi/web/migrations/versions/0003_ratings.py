"""Ratings: rated games, each account's Glicko-2 rating per category, and its history.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04

Three new tables, nothing else touched: ``rated_games`` (a game between two accounts that counts, and
whether it has been rated), ``ratings`` (an account's rating, RD, volatility and results in a category)
and ``rating_history`` (the rating after each rated game, for the player page's chart).
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _moment() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "rated_games",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("category", sa.String(16), nullable=False),
        sa.Column("account0", sa.String(32), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("account1", sa.String(32), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("rated", _moment(), nullable=True),
    )
    op.create_table(
        "ratings",
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("category", sa.String(16), primary_key=True),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("updated", _moment(), nullable=False),
    )
    op.create_table(
        "rating_history",
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("category", sa.String(16), primary_key=True),
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("at", _moment(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rating_history")
    op.drop_table("ratings")
    op.drop_table("rated_games")
