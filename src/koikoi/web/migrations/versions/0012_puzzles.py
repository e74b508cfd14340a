"""Puzzles (issue 46): the puzzles, their solvers' ratings and every try.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07

Three new tables: ``puzzles`` (each puzzle's JSON, kept on the server, and its Glicko-2 rating),
``puzzle_ratings`` (an account's puzzle rating, apart from its game ratings) and ``puzzle_attempts``
(each try, by the hash of its token, whose it is, how far it went and what it did to the ratings).
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def _moment() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "puzzles",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("rules", sa.String(40), nullable=False),
        sa.Column("themes", sa.String(80), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False, index=True),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("plays", sa.Integer(), nullable=False),
        sa.Column("solved", sa.Integer(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("added", _moment(), nullable=False),
    )
    op.create_table(
        "puzzle_ratings",
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), primary_key=True),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("plays", sa.Integer(), nullable=False),
        sa.Column("solved", sa.Integer(), nullable=False),
        sa.Column("best_streak", sa.Integer(), nullable=False),
        sa.Column("updated", _moment(), nullable=False),
    )
    op.create_table(
        "puzzle_attempts",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("puzzle_id", sa.String(16), sa.ForeignKey("puzzles.id"), nullable=False, index=True),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), nullable=True, index=True),
        sa.Column("guest", sa.String(64), nullable=True),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("streak", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("result", sa.String(8), nullable=True),
        sa.Column("rating_before", sa.Float(), nullable=True),
        sa.Column("rating_after", sa.Float(), nullable=True),
        sa.Column("started", _moment(), nullable=False),
        sa.Column("ended", _moment(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("puzzle_attempts")
    op.drop_table("puzzle_ratings")
    op.drop_table("puzzles")
