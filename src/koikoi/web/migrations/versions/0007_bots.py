"""Bots online: bot accounts, their API tokens, and people's challenges to them (issue 32, item 6).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06

Two nullable columns on ``accounts`` (``bot_since``: the account is a bot's; ``bot_owner``: the account
that runs it), and two new tables: ``bot_tokens`` (the SHA-256 of each token, as sessions keep theirs)
and ``challenges`` (a person's challenge to a bot, and once accepted the game it led to). Nothing
existing is rewritten: every account stays a person's.
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _moment() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("accounts", sa.Column("bot_since", _moment(), nullable=True))
    op.add_column("accounts", sa.Column("bot_owner", sa.String(32), nullable=True))
    op.create_table(
        "bot_tokens",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("hint", sa.String(16), nullable=False),
        sa.Column("created", _moment(), nullable=False),
        sa.Column("seen", _moment(), nullable=True),
        sa.Column("revoked", _moment(), nullable=True),
    )
    op.create_index("ix_bot_tokens_account_id", "bot_tokens", ["account_id"])
    op.create_table(
        "challenges",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("bot_id", sa.String(32), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("provisional", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(16), nullable=True),
        sa.Column("created", _moment(), nullable=False),
        sa.Column("seen", _moment(), nullable=False),
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), nullable=True),
        sa.Column("token", sa.String(64), nullable=True),
    )
    op.create_index("ix_challenges_bot_id", "challenges", ["bot_id"])
    op.create_index("ix_challenges_owner", "challenges", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_challenges_owner", table_name="challenges")
    op.drop_index("ix_challenges_bot_id", table_name="challenges")
    op.drop_table("challenges")
    op.drop_index("ix_bot_tokens_account_id", table_name="bot_tokens")
    op.drop_table("bot_tokens")
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("bot_owner")
        batch.drop_column("bot_since")
