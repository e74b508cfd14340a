"""The baseline: the schema as koikoi made it before it had migrations (``metadata.create_all``).

Revision ID: 0001
Revises:
Create Date: 2026-12-04

A database made before migrations existed holds some or all of these tables already, and no
``alembic_version``: the tables it has are kept as they are (nothing is created twice, no row is touched)
and the ones it lacks (a database from before the invitations, the computer's turns or the reviews were
kept) are created, which is what opening it with the code of that time did. A table of one of these names
whose columns are not these is some other program's: the upgrade stops and says so.

These definitions are frozen: a later change to the schema is a new revision, never an edit here.
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

from koikoi.web.migrate import SchemaError

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _moment() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _tables() -> list[tuple[str, list[sa.Column[Any]], list[tuple[str, str]]]]:
    """Each table: its name, its columns (with the primary key and foreign keys) and its indexes."""
    return [
        (
            "games",
            [
                sa.Column("id", sa.String(32), primary_key=True),
                sa.Column("created", _moment(), nullable=False),
                sa.Column("updated", _moment(), nullable=False),
                sa.Column("rules", sa.Text(), nullable=False),
                sa.Column("seed", sa.BigInteger(), nullable=False),
                sa.Column("opponent", sa.String(16), nullable=False),
                sa.Column("ai_seed", sa.BigInteger(), nullable=False),
                sa.Column("status", sa.String(16), nullable=False),
                sa.Column("moves", sa.Integer(), nullable=False),
                sa.Column("scores", sa.String(64), nullable=False),
                sa.Column("birth_months", sa.String(8), nullable=True),
            ],
            [],
        ),
        (
            "seats",
            [
                sa.Column("token", sa.String(64), primary_key=True),
                sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), nullable=False),
                sa.Column("seat", sa.Integer(), nullable=False),
                sa.Column("kind", sa.String(16), nullable=False),
                sa.Column("name", sa.String(64), nullable=False),
                sa.Column("owner", sa.String(64), nullable=True),
            ],
            [("ix_seats_game_id", "game_id"), ("ix_seats_owner", "owner")],
        ),
        (
            "invitations",
            [
                sa.Column("token", sa.String(64), primary_key=True),
                sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), nullable=False),
                sa.Column("seat", sa.Integer(), nullable=False),
                sa.Column("created", _moment(), nullable=False),
                sa.Column("spent", _moment(), nullable=True),
            ],
            [("ix_invitations_game_id", "game_id")],
        ),
        (
            "problems",
            [
                sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
                sa.Column("reason", sa.Text(), nullable=False),
                sa.Column("at", _moment(), nullable=False),
            ],
            [],
        ),
        (
            "ai_turns",
            [
                sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
                sa.Column("seq", sa.Integer(), nullable=False),
                sa.Column("owner", sa.String(32), nullable=True),
                sa.Column("until", _moment(), nullable=False),
            ],
            [],
        ),
        (
            "reviews",
            [
                sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
                sa.Column("seat", sa.Integer(), primary_key=True),
                sa.Column("status", sa.String(16), nullable=False),
                sa.Column("done", sa.Integer(), nullable=False),
                sa.Column("total", sa.Integer(), nullable=True),
                sa.Column("owner", sa.String(32), nullable=True),
                sa.Column("until", _moment(), nullable=False),
                sa.Column("body", sa.Text(), nullable=True),
            ],
            [],
        ),
        (
            "actions",
            [
                sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
                sa.Column("seq", sa.Integer(), primary_key=True),
                sa.Column("seat", sa.Integer(), nullable=False),
                sa.Column("action", sa.Integer(), nullable=False),
                sa.Column("at", _moment(), nullable=False),
            ],
            [],
        ),
        (
            # koikoi.web.browsers: the key that signs browser ids, shared by every process.
            "server_keys",
            [
                sa.Column("name", sa.String(32), primary_key=True),
                sa.Column("value", sa.String(128), nullable=False),
            ],
            [],
        ),
        (
            "adopted_browser_ids",
            [
                sa.Column("id", sa.String(64), primary_key=True),
                sa.Column("at", _moment(), nullable=False),
            ],
            [],
        ),
    ]


def upgrade() -> None:
    present = set(sa.inspect(op.get_bind()).get_table_names())
    for name, columns, indexes in _tables():
        if name in present:
            found = {c["name"] for c in sa.inspect(op.get_bind()).get_columns(name)}
            expected = {c.name for c in columns}
            if found != expected:
                raise SchemaError(
                    f"the database holds a table {name!r} that is not koikoi's: its columns are "
                    f"{', '.join(sorted(found))}, not {', '.join(sorted(expected))}"
                )
            continue  # made before migrations existed: kept as it is
        op.create_table(name, *columns)
        for index, column in indexes:
            op.create_index(index, name, [column])


def downgrade() -> None:
    for name, _columns, indexes in reversed(_tables()):
        for index, _column in indexes:
            op.drop_index(index, table_name=name)
        op.drop_table(name)
