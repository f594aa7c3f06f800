"""Move analysis: the solved value of each stored Connect Four move (``arena analyse``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02

One row per analysed move, keyed like ``moves`` and referring to it. Nothing
else changes, so a database without analyses works as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create ``move_analysis``."""
    op.create_table(
        "move_analysis",
        sa.Column("match_id", sa.String(16), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("score_before", sa.SmallInteger(), nullable=True),
        sa.Column("score_after", sa.SmallInteger(), nullable=True),
        sa.Column("outcome_before", sa.SmallInteger(), nullable=True),
        sa.Column("outcome_after", sa.SmallInteger(), nullable=True),
        sa.Column("blunder", sa.Boolean(), nullable=True),
        sa.Column("budget_ms", sa.Integer(), nullable=False),
        sa.Column("analysed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id", "ply"],
            ["moves.match_id", "moves.ply"],
            name="fk_move_analysis_match_id_moves",
        ),
        sa.PrimaryKeyConstraint("match_id", "ply", name="pk_move_analysis"),
    )


def downgrade() -> None:
    """Drop ``move_analysis``."""
    op.drop_table("move_analysis")
