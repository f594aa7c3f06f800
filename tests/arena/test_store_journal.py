"""The recovery journal file on its own: format round trip, merging closers, reservation.

Replay into a real database after a real full disk is tested in
test_store_outage.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from arena.store.batch_sql import PlainBatch
from arena.store.journal import (
    DEFAULT_RESERVE_BYTES,
    JOURNAL_ANALYSIS_FACTOR,
    JOURNAL_ROW_BYTES,
    RecoveryJournal,
    decode,
    encode_session,
)
from arena.store.movebuffer import DEFAULT_MAX_ANALYSIS_BYTES, DEFAULT_MAX_PENDING
from protocol.games import Termination

AT = datetime(2026, 12, 1, 10, 30, 15, 123456, tzinfo=UTC)


def batch(match_id: str) -> PlainBatch:
    row = {"id": match_id, "game": "connect4", "status": "live", "started_at": AT, "ended_at": None}
    moves = [(0, 0, 3, 12, 1, 1764585015.25, '{"value":0.5}'), (1, 1, 4, 9, 2, 1764585016.5, None)]
    end = {"status": "finished", "winner": 0, "termination": Termination.LINE.value, "ended_at": AT}
    return PlainBatch([row], [(match_id, moves)], [(match_id, end)])


@pytest.fixture
def journal(tmp_path: Path) -> RecoveryJournal:
    return RecoveryJournal(
        tmp_path / "arena.db.recovery.jsonl",
        tmp_path / "fallback" / "x.recovery.jsonl",
        "sqlite+aiosqlite:///arena.db",
    )


def test_a_session_round_trips_with_its_times() -> None:
    data = encode_session(batch("m1"), "sqlite+aiosqlite:///arena.db", "node-1")
    header = json.loads(data.splitlines()[0])
    assert header["journal"] == "arena-recovery" and header["version"] == 1
    assert (header["node"], header["matches"], header["moves"], header["ends"]) == (
        "node-1",
        1,
        2,
        1,
    )
    assert decode(data) == [batch("m1")]


def test_a_move_row_of_an_earlier_version_has_no_analysis() -> None:
    data = encode_session(batch("m1"), "sqlite+aiosqlite:///arena.db", "node-1")
    old = data.replace(b',"{\\"value\\":0.5}"]', b"]").replace(b",null]", b"]")
    # The analysis itself, not any "0.5" (the header's written_at may hold one).
    assert b'\\"value\\":0.5' not in old and b"null]" not in old
    [decoded] = decode(old)
    assert [row[6] for _, rows in decoded.moves for row in rows] == [None, None]


def test_closers_merge_into_one_file_and_a_changed_file_is_not_deleted(
    journal: RecoveryJournal,
) -> None:
    first = journal.write(encode_session(batch("m1"), journal.database, "a"))
    [loaded] = journal.load()
    assert loaded.batches == [batch("m1")]
    second = journal.write(encode_session(batch("m2"), journal.database, "b"))
    assert first == second == journal.path
    assert not journal.remove(loaded)  # it grew since it was read: keep it
    [reloaded] = journal.load()
    assert reloaded.batches == [batch("m1"), batch("m2")]
    assert journal.remove(reloaded) and journal.load() == []
    leftovers = [p.name for p in journal.path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_the_reservation_is_room_given_back_to_the_journal(journal: RecoveryJournal) -> None:
    assert journal.reserve(64 * 1024)
    assert journal.reservation.stat().st_blocks * 512 >= 64 * 1024  # allocated, not sparse
    journal.write(encode_session(batch("m1"), journal.database, None))
    assert not journal.reservation.exists()


def test_a_bad_line_is_named(journal: RecoveryJournal) -> None:
    good = encode_session(batch("m1"), journal.database, None)
    journal.path.write_bytes(good + b'{"end": "m1"}\n')
    with pytest.raises(ValueError, match=f"{journal.path}: line 5: "):
        journal.load()


def test_the_reserve_holds_the_largest_backlog_the_store_keeps() -> None:
    """Rows with the largest numbers the store takes and reports full of quotes: the journal
    needs at most ``JOURNAL_ROW_BYTES`` a move plus ``JOURNAL_ANALYSIS_FACTOR`` bytes per
    character of report, the sum the default reserve is made of."""
    stat = '{"move":63,"visits":4294967295,"value":-0.123456789012}'
    report = '{"simulations":4294967295,"moves":[' + ",".join([stat] * 16) + "]}"
    moves, text_chars = [], 0
    for ply in range(2_000):
        text = report if ply % 2 else None
        text_chars += len(text or "")
        moves.append((10_000 + ply, 1, 63, 172_800_000, 1_000, 1795935688.123456, text))
    backlog = PlainBatch([], [(f"m{k}", moves[k::20]) for k in range(20)], [])
    size = len(encode_session(backlog, "sqlite+aiosqlite:///arena.db", None))
    assert size <= len(moves) * JOURNAL_ROW_BYTES + JOURNAL_ANALYSIS_FACTOR * text_chars
    assert DEFAULT_RESERVE_BYTES == (
        DEFAULT_MAX_PENDING * JOURNAL_ROW_BYTES
        + JOURNAL_ANALYSIS_FACTOR * DEFAULT_MAX_ANALYSIS_BYTES
    )
