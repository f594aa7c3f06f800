"""Initial schema: bots, matches, moves, ratings, rating history.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

_TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the five tables."""
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", _TIMESTAMP, nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_bots"),
        sa.UniqueConstraint("name", name="uq_bots_name"),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.String(16), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("player0_id", sa.Integer(), nullable=False),
        sa.Column("player1_id", sa.Integer(), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("winner", sa.SmallInteger(), nullable=True),
        sa.Column("result", sa.String(8), nullable=True),
        sa.Column("termination", sa.String(32), nullable=True),
        sa.Column("fault", sa.String(32), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("started_at", _TIMESTAMP, nullable=False),
        sa.Column("ended_at", _TIMESTAMP, nullable=True),
        sa.CheckConstraint("status IN ('live', 'finished', 'aborted')", name="ck_matches_status"),
        sa.ForeignKeyConstraint(["player0_id"], ["bots.id"], name="fk_matches_player0_id_bots"),
        sa.ForeignKeyConstraint(["player1_id"], ["bots.id"], name="fk_matches_player1_id_bots"),
        sa.PrimaryKeyConstraint("id", name="pk_matches"),
    )
    op.create_table(
        "moves",
        sa.Column("match_id", sa.String(16), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("player", sa.SmallInteger(), nullable=False),
        sa.Column("move", sa.Integer(), nullable=False),
        sa.Column("think_ms", sa.Integer(), nullable=False),
        sa.Column("rtt_ms", sa.Integer(), nullable=False),
        sa.Column("played_at", _TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], name="fk_moves_match_id_matches"),
        sa.PrimaryKeyConstraint("match_id", "ply", name="pk_moves"),
    )
    op.create_table(
        "ratings",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("rating", sa.Double(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name="fk_ratings_bot_id_bots"),
        sa.PrimaryKeyConstraint("bot_id", "game", name="pk_ratings"),
    )
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("match_id", sa.String(16), nullable=False),
        sa.Column("before", sa.Double(), nullable=False),
        sa.Column("after", sa.Double(), nullable=False),
        sa.Column("at", _TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name="fk_rating_history_bot_id_bots"),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name="fk_rating_history_match_id_matches"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_rating_history"),
    )


def downgrade() -> None:
    """Drop the five tables."""
    for table in ("rating_history", "ratings", "moves", "matches", "bots"):
        op.drop_table(table)
