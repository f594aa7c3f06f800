"""Move search: the analysis a bot reported with each move, and the solved value of each
candidate move.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-12

``moves.analysis`` holds the mover's ``analysis`` as compact JSON text
(bounded, see ``arena.store.searches``), or NULL when it sent none.
``move_analysis.candidates`` holds, as JSON, the solved value of every legal
move of the position (``arena analyse``), so a replay puts what the search
thought beside what was true. Rows written before this revision have NULL.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add ``moves.analysis`` and ``move_analysis.candidates``."""
    op.add_column("moves", sa.Column("analysis", sa.Text(), nullable=True))
    op.add_column("move_analysis", sa.Column("candidates", sa.Text(), nullable=True))


def downgrade() -> None:
    """Drop ``moves.analysis`` and ``move_analysis.candidates``."""
    with op.batch_alter_table("move_analysis") as batch:
        batch.drop_column("candidates")
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("analysis")
