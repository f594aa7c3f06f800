"""Node ownership: the ``nodes`` table of arena processes and their leases, ``matches.node_id``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

Matches written by an older arena keep ``node_id`` NULL: no known owner, so
the next start-up cleanup ends them if they are still live.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None

_TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create ``nodes``; add the nullable ``matches.node_id``."""
    op.create_table(
        "nodes",
        sa.Column("id", sa.String(128), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(128), nullable=False),
        sa.Column("pid_start", sa.BigInteger(), nullable=True),
        sa.Column("exclusive", sa.Boolean(), nullable=False),
        sa.Column("started_at", _TIMESTAMP, nullable=False),
        sa.Column("heartbeat_at", _TIMESTAMP, nullable=False),
        sa.Column("expires_at", _TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_nodes"),
    )
    op.add_column("matches", sa.Column("node_id", sa.String(128), nullable=True))


def downgrade() -> None:
    """Drop ``matches.node_id`` and ``nodes``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("node_id")
    op.drop_table("nodes")
