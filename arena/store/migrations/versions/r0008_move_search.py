"""Move search: the analysis a bot reported with each move, stored with the move.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-12

``moves.analysis`` holds the mover's ``analysis`` as compact JSON text
(bounded, see ``arena.store.searches``), or NULL when it sent none. Rows
written before this revision have NULL: nothing else changes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add ``moves.analysis``."""
    op.add_column("moves", sa.Column("analysis", sa.Text(), nullable=True))


def downgrade() -> None:
    """Drop ``moves.analysis``."""
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("analysis")
