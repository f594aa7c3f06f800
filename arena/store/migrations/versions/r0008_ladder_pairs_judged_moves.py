"""Ladder pairs and judged moves: two bots' meetings found by index; which moves mattered.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-14

``ix_matches_player0_id_player1_id_game`` and its mirror
``ix_matches_player1_id_player0_id_game`` find a bot's past games by
opponent (rated openings: ``arena.store.pair_history``). ``move_analysis.choice_matters``
says whether some legal move would have changed the solved value (NULL:
not known); accuracy and blunders count only moves where it did
(``docs/analysis.md``). The rows analysed before it existed cannot say, so
they are deleted: the next ``arena analyse --all`` analyses those matches
again, and every figure is made under one rule.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add the pair indexes and ``choice_matters``; drop the analyses made without it."""
    op.create_index(
        "ix_matches_player0_id_player1_id_game", "matches", ["player0_id", "player1_id", "game"]
    )
    op.create_index(
        "ix_matches_player1_id_player0_id_game", "matches", ["player1_id", "player0_id", "game"]
    )
    op.execute("DELETE FROM move_analysis")
    with op.batch_alter_table("move_analysis") as batch:
        batch.add_column(sa.Column("choice_matters", sa.Boolean(), nullable=True))


def downgrade() -> None:
    """Drop ``choice_matters`` and the pair indexes."""
    with op.batch_alter_table("move_analysis") as batch:
        batch.drop_column("choice_matters")
    op.drop_index("ix_matches_player1_id_player0_id_game", table_name="matches")
    op.drop_index("ix_matches_player0_id_player1_id_game", table_name="matches")
