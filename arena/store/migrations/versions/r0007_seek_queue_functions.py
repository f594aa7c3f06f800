"""Several nodes, one arena: a pairing pass through ``seek_queue`` in two round trips.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-10

Two PostgreSQL functions do a pass's database work (``arena.cluster.seek_queue``):
``seek_queue_sync`` brings a node's rows in line with its lobby and returns the
whole queue, ``seek_queue_take`` deletes the rows of the pairs a node keeps (if
they are still there), notifies the nodes of their moving players and returns
what the host needs to know of those players. Each takes the queue's advisory
lock for its own statement only, so passes of all nodes are serialized without
a lock held while the Python side of a pass (on a busy event loop) pairs. The
pairing rule stays in Python. SQLite has no such functions and needs none: the
shared queue is used only with PostgreSQL, so on SQLite this revision changes
nothing.
"""

from __future__ import annotations

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

# In a VOLATILE PL/pgSQL function each statement takes a fresh snapshot, so the statements
# after the lock see every row that passes holding the lock before committed (one statement
# with CTEs would read as of its start, before it waited for the lock).
SYNC = """
CREATE FUNCTION seek_queue_sync(
    p_lock bigint, p_node text, p_withdrawn integer[], p_moved integer[], p_moved_to boolean[],
    p_local integer[], p_bot text[], p_game text[], p_move_ms integer[], p_bank_ms integer[],
    p_rating double precision[], p_movable boolean[]
) RETURNS SETOF seek_queue LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    DELETE FROM seek_queue AS q WHERE q.node_id = p_node AND q.local_id = ANY(p_withdrawn);
    UPDATE seek_queue AS q SET movable = m.movable
        FROM unnest(p_moved, p_moved_to) AS m(local_id, movable)
        WHERE q.node_id = p_node AND q.local_id = m.local_id;
    INSERT INTO seek_queue (node_id, local_id, bot, game, move_ms, bank_ms, rating, movable)
        SELECT p_node, n.*
        FROM unnest(p_local, p_bot, p_game, p_move_ms, p_bank_ms, p_rating, p_movable) AS n;
    RETURN QUERY SELECT * FROM seek_queue AS q ORDER BY q.id;
END
$$
"""

# A pair is taken only if its rows are still there and the other node's row is still
# movable: between the node's read of the queue and its take another pass may have taken one
# of them, or the other node may have started a match for its bot. A NULL id is a seek of the
# calling node that has no row (it pairs from a read made before its sync). Rows are locked
# before the count, so a node's row deleted meanwhile (the node is gone) cannot leave half a
# pair.
TAKE = """
CREATE FUNCTION seek_queue_take(
    p_lock bigint, p_node text, p_first bigint[], p_second bigint[],
    p_channel text[], p_payload text[]
) RETURNS TABLE (
    taken integer, remote_id integer, remote_token_hash text,
    remote_created_at timestamptz, remote_ratings text
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    i integer;
    found integer;
    remote text;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    FOR i IN 1 .. coalesce(array_length(p_first, 1), 0) LOOP
        PERFORM 1 FROM seek_queue AS q WHERE q.id IN (p_first[i], p_second[i]) FOR UPDATE;
        SELECT count(*), max(q.bot) FILTER (WHERE q.node_id <> p_node) INTO found, remote
            FROM seek_queue AS q
            WHERE q.id IN (p_first[i], p_second[i]) AND (q.movable OR q.node_id = p_node);
        CONTINUE WHEN found < cardinality(array_remove(ARRAY[p_first[i], p_second[i]], NULL));
        DELETE FROM seek_queue AS q WHERE q.id IN (p_first[i], p_second[i]);
        IF p_channel[i] IS NOT NULL THEN
            PERFORM pg_notify(p_channel[i], p_payload[i]);
        END IF;
        RETURN QUERY
            SELECT i, b.id, b.token_hash::text, b.created_at,
                   (SELECT json_object_agg(r.game, r.rating) FROM ratings AS r
                    WHERE r.bot_id = b.id)::text
            FROM (SELECT 1) AS one
            LEFT JOIN bots AS b ON b.name = remote AND b.active;
    END LOOP;
END
$$
"""


def upgrade() -> None:
    """Create ``seek_queue_sync`` and ``seek_queue_take`` (PostgreSQL only)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(SYNC)
    op.execute(TAKE)


def downgrade() -> None:
    """Drop the two functions (PostgreSQL only)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP FUNCTION seek_queue_take(bigint, text, bigint[], bigint[], text[], text[])")
    op.execute(
        "DROP FUNCTION seek_queue_sync(bigint, text, integer[], integer[], boolean[], integer[],"
        " text[], text[], integer[], integer[], double precision[], boolean[])"
    )
