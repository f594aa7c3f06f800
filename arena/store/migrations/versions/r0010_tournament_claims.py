"""Tournament claims: the game slots the nodes of a multi-node arena are playing.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-29

``tournament_claims`` holds one row per tournament game a node has offered
to its bots and not yet handed to the tournament's count (see
``arena.store.tournaments``): every node of a shared database schedules a
running tournament's games for the bots connected to it, and the row is how
they agree that a slot is played once and the tournament's concurrency holds
across them. Single-node arenas leave it empty.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create ``tournament_claims``."""
    op.create_table(
        "tournament_claims",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("pair", sa.Integer(), nullable=False),
        sa.Column("game", sa.Integer(), nullable=False),
        sa.Column("node_id", sa.String(128), nullable=False),
        sa.Column("ended", sa.Boolean(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name="fk_tournament_claims_tournament_id_tournaments",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_tournament_claims"),
    )
    op.create_index("ix_tournament_claims_tournament_id", "tournament_claims", ["tournament_id"])


def downgrade() -> None:
    """Drop ``tournament_claims``."""
    op.drop_index("ix_tournament_claims_tournament_id", table_name="tournament_claims")
    op.drop_table("tournament_claims")
