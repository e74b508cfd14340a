"""Sign-in that nobody else can lock (issue 43, item 5): device cookies and a delay that grows.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

One nullable column and one new table, nothing else touched: ``accounts.failed_until`` (until when a
browser the account does not know waits before its next sign-in, after a few wrong passwords from such
browsers; NULL: no wait) and ``device_failures`` (wrong passwords from one browser that signed in to the
account before, counted for that browser alone).
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("accounts", sa.Column("failed_until", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "device_failures",
        sa.Column("device", sa.String(32), primary_key=True),
        sa.Column("account_id", sa.String(32), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("device_failures")
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("failed_until")
