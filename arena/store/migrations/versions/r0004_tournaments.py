"""Tournaments: their settings, participants, openings and schedule; each match's origin.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-08

``matches`` gains three nullable columns: ``opening`` (the moves a match
started from), ``tournament_id`` and ``tournament_pair``. Existing matches
keep NULL in all three: they started from the initial position, outside any
tournament.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

_TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the four tournament tables; add the match columns and their index."""
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("games_per_pair", sa.Integer(), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("openings", sa.String(255), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("elo0", sa.Double(), nullable=True),
        sa.Column("elo1", sa.Double(), nullable=True),
        sa.Column("alpha", sa.Double(), nullable=True),
        sa.Column("beta", sa.Double(), nullable=True),
        sa.Column("sprt_model", sa.String(16), nullable=True),
        sa.Column("max_games", sa.Integer(), nullable=True),
        sa.Column("verdict", sa.String(16), nullable=True),
        sa.Column("verdict_games", sa.Integer(), nullable=True),
        sa.Column("created_at", _TIMESTAMP, nullable=False),
        sa.Column("started_at", _TIMESTAMP, nullable=True),
        sa.Column("ended_at", _TIMESTAMP, nullable=True),
        sa.Column("node_id", sa.String(128), nullable=True),
        sa.CheckConstraint(
            "format IN ('round-robin', 'gauntlet', 'sprt', 'ladder')",
            name="ck_tournaments_format",
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'running', 'paused', 'finished', 'cancelled')",
            name="ck_tournaments_status",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_tournaments"),
    )
    op.create_table(
        "tournament_participants",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("removed_at", _TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name="fk_tournament_participants_tournament_id_tournaments",
        ),
        sa.ForeignKeyConstraint(
            ["bot_id"], ["bots.id"], name="fk_tournament_participants_bot_id_bots"
        ),
        sa.PrimaryKeyConstraint("tournament_id", "seat", name="pk_tournament_participants"),
    )
    op.create_table(
        "tournament_openings",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name="fk_tournament_openings_tournament_id_tournaments",
        ),
        sa.PrimaryKeyConstraint("tournament_id", "number", name="pk_tournament_openings"),
    )
    op.create_table(
        "tournament_pairs",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("seat_a", sa.Integer(), nullable=False),
        sa.Column("seat_b", sa.Integer(), nullable=False),
        sa.Column("opening", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name="fk_tournament_pairs_tournament_id_tournaments",
        ),
        sa.PrimaryKeyConstraint("tournament_id", "number", name="pk_tournament_pairs"),
    )
    op.add_column("matches", sa.Column("opening", sa.Text(), nullable=True))
    if op.get_bind().dialect.name == "sqlite":
        # SQLite cannot add a constraint to a table, but it adds a column with its
        # REFERENCES clause in place; a batch rebuild would instead drop the old table,
        # which the foreign keys of moves and rating_history forbid.
        op.execute(
            "ALTER TABLE matches ADD COLUMN tournament_id INTEGER "
            "CONSTRAINT fk_matches_tournament_id_tournaments REFERENCES tournaments (id)"
        )
    else:
        op.add_column("matches", sa.Column("tournament_id", sa.Integer(), nullable=True))
        op.create_foreign_key(
            "fk_matches_tournament_id_tournaments",
            "matches",
            "tournaments",
            ["tournament_id"],
            ["id"],
        )
    op.add_column("matches", sa.Column("tournament_pair", sa.Integer(), nullable=True))
    op.create_index(
        "ix_matches_tournament_id_tournament_pair",
        "matches",
        ["tournament_id", "tournament_pair"],
    )


def downgrade() -> None:
    """Drop the match columns and the four tournament tables."""
    op.drop_index("ix_matches_tournament_id_tournament_pair", table_name="matches")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("tournament_pair")
        batch.drop_column("tournament_id")
        batch.drop_column("opening")
    for table in (
        "tournament_pairs",
        "tournament_openings",
        "tournament_participants",
        "tournaments",
    ):
        op.drop_table(table)
