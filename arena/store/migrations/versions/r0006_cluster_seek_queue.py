"""Several nodes, one arena: the shared ``seek_queue`` and each node's ``nodes.public_url``.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-08

``seek_queue`` holds the seeks of every node's bots while several nodes share
a PostgreSQL database (``arena.cluster.seek_queue``); a node's rows go with
its ``nodes`` row. ``public_url`` is where bots reach a node, so another node
can redirect them to a match it hosts. A single-node arena leaves both empty.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create ``seek_queue``; add the nullable ``nodes.public_url``."""
    op.add_column("nodes", sa.Column("public_url", sa.String(512), nullable=True))
    op.create_table(
        "seek_queue",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("node_id", sa.String(128), nullable=False),
        sa.Column("local_id", sa.Integer(), nullable=False),
        sa.Column("bot", sa.String(64), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Double(), nullable=False),
        sa.Column("movable", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_seek_queue"),
        sa.ForeignKeyConstraint(
            ["node_id"], ["nodes.id"], name="fk_seek_queue_node_id_nodes", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("node_id", "local_id", name="uq_seek_queue_node_id"),
    )


def downgrade() -> None:
    """Drop ``seek_queue`` and ``nodes.public_url``."""
    op.drop_table("seek_queue")
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("public_url")
