"""Indexes for the hot queries: live/recent matches, a bot's history, a match's changes.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add the indexes behind abort_unfinished/list_matches, rating_history and get_match."""
    op.create_index("ix_matches_status_started_at", "matches", ["status", "started_at"])
    op.create_index("ix_rating_history_bot_id_game", "rating_history", ["bot_id", "game", "id"])
    op.create_index("ix_rating_history_match_id", "rating_history", ["match_id"])


def downgrade() -> None:
    """Drop the indexes."""
    op.drop_index("ix_rating_history_match_id", table_name="rating_history")
    op.drop_index("ix_rating_history_bot_id_game", table_name="rating_history")
    op.drop_index("ix_matches_status_started_at", table_name="matches")
