"""What a bot is told is what the database holds: real ``arena serve`` processes, a real SQLite
file (on a real full filesystem where it matters) and scripted bots over websockets."""

from __future__ import annotations

import asyncio
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from disk_fixture import fill
from serve_process import Bot, ServeProcess, add_bots, arena, pair_up

from arena.store import Store

X_WINS = (0, 3, 1, 4, 2)
"""A tic-tac-toe game the first player wins on the top row (seats alternate)."""


def sqlite(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


async def stored(db: str, match_id: str) -> tuple[str, str | None, int]:
    """The match's status, result and number of moves, read with a read-only store."""
    store = await Store.open(db, create=False)
    try:
        record = await store.get_match(match_id)
    finally:
        await store.close()
    assert record is not None
    return record.status, record.result, len(record.moves)


async def play(x: Bot, o: Bot, match_id: str, moves: tuple[int, ...], start_ply: int = 0) -> None:
    """Play ``moves`` from ``start_ply``, each side waiting for its ``your_turn``."""
    for ply, move in enumerate(moves, start_ply):
        mover = (x, o)[ply % 2]
        if ply > 0:
            await mover.expect("your_turn")
        await mover.send(type="move", match_id=match_id, ply=ply, move=move)


async def test_a_second_server_on_the_same_file_is_refused_and_the_first_plays_on(
    tmp_path: Path,
) -> None:
    db = sqlite(tmp_path / "arena.db")
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    first = ServeProcess(db).start()
    try:
        alice = await Bot.login(first.url, "alice", tokens["alice"])
        bob = await Bot.login(first.url, "bob", tokens["bob"])
        x, o, turn = await pair_up(alice, bob)
        match_id = turn["match_id"]
        await play(x, o, match_id, X_WINS[:2])
        second = await asyncio.to_thread(arena, "serve", "--port", "0", "--db", db)
        assert second.returncode == 2
        [line] = [line for line in second.stderr.splitlines() if line.strip()]
        assert line.startswith(f"error: database {db} is in use by arena node ")
        assert first.process is not None and f"(pid {first.process.pid} on " in line
        assert await stored(db, match_id) == ("live", None, 2)
        # The first server's match goes on to its real end, and the database agrees.
        await play(x, o, match_id, X_WINS[2:], start_ply=2)
        end = await x.expect("match_end")
        assert (end["result"], end["termination"]) == ("1-0", "line")
        assert await stored(db, match_id) == ("finished", "1-0", 5)
    finally:
        assert first.stop() == 0


async def test_a_result_waits_for_a_full_disk_and_seekers_are_told_why(
    small_disk: Path, tmp_path: Path
) -> None:
    db = sqlite(small_disk / "arena.db")
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob", "carol", "dave")
    server = ServeProcess(db, "--journal", str(tmp_path / "journal.jsonl")).start()
    try:
        bots = {n: await Bot.login(server.url, n, tokens[n]) for n in tokens}
        x, o, turn = await pair_up(bots["alice"], bots["bob"])
        match_id = turn["match_id"]
        await play(x, o, match_id, X_WINS[:4])
        await o.expect("moved")
        filler = fill(small_disk)
        await play(x, o, match_id, X_WINS[4:], start_ply=4)  # the winning move
        await x.nothing_of("match_end", 2.0)  # decided, but not stored: nobody is told
        status, body = await asyncio.to_thread(server.health)
        assert (status, body["status"]) == (503, "degraded") and "full" in body["store"]
        seek = {"game": "tictactoe", "time_control": {"move_ms": 60_000, "bank_ms": 0}}
        for name in ("carol", "dave"):
            await bots[name].send(type="seek", **seek)
        for name in ("carol", "dave"):
            error = await bots[name].expect("error")
            assert error["code"] == "store_unavailable" and "full" in error["message"]
        await bots["carol"].nothing_of("match_start", 0.5)
        filler.unlink()
        end = await x.expect("match_end", timeout=20)
        assert (end["result"], end["termination"]) == ("1-0", "line")
        assert (await o.expect("match_end"))["result"] == "1-0"
        assert await stored(db, match_id) == ("finished", "1-0", 5)
        assert (await bots["carol"].expect("match_start", timeout=20))["players"]
        assert (await asyncio.to_thread(server.health))[0] == 200
    finally:
        assert server.stop() == 0


async def test_a_shutdown_on_a_full_disk_journals_the_result_and_the_next_start_stores_it(
    small_disk: Path, tmp_path: Path
) -> None:
    db = sqlite(small_disk / "arena.db")
    journal = tmp_path / "journal.jsonl"
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    server = ServeProcess(db, "--journal", str(journal)).start()
    alice = await Bot.login(server.url, "alice", tokens["alice"])
    bob = await Bot.login(server.url, "bob", tokens["bob"])
    x, o, turn = await pair_up(alice, bob)
    match_id = turn["match_id"]
    await play(x, o, match_id, X_WINS)
    await x.expect("moved")
    filler = fill(small_disk)  # may land before or after the last moves' commit
    await asyncio.sleep(0.2)
    assert await asyncio.to_thread(server.stop) == 0
    # Whatever was not stored was not told: the bots heard of the shutdown, not a result
    # the database might lack.
    told = [m for m in [await x.expect("error")] if m["code"] == "server_shutdown"]
    assert told
    filler.unlink()
    if journal.exists():
        restarted = ServeProcess(db, "--journal", str(journal)).start()
        assert restarted.stop() == 0
        assert not journal.exists()
    status, result, moves = await stored(db, match_id)
    assert moves == 5 and (status, result) in {("finished", "1-0"), ("aborted", "*")}


BAD_URLS = [
    "mysql+aiomysql://arena:secret@db/arena",
    "sqlite+aiosqlite:////nonexistent-directory/arena.db",
    "postgresql+asyncpg://arena:secret@127.0.0.1:1/arena",
]
COMMANDS = [
    ["serve", "--port", "0"],
    ["demo", "--port", "0", "--duration", "1"],
    ["bots", "add", "newbot"],
    ["bots", "list"],
    ["bots", "remove", "newbot"],
    ["leaderboard"],
    ["ratings", "rebuild"],
    ["tournament", "create", "--bots", "a,b"],
    ["tournament", "run", "--local", "random", "greedy"],
]
READ_ONLY = [
    ["bots", "list"],
    ["bots", "remove", "newbot"],
    ["leaderboard"],
    ["ratings", "rebuild"],
    ["tournament", "list"],
    ["tournament", "status", "1"],
]


def _refusal(command: list[str], db: str) -> tuple[int, str, float]:
    started = time.monotonic()
    done = arena(*command, "--db", db, timeout=30)
    return done.returncode, done.stderr, time.monotonic() - started


@pytest.mark.skipif(sys.platform != "linux", reason="the connection errors are Linux's")
def test_every_command_refuses_a_bad_database_in_one_line(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.db")
    # Every command meets a bad URL and every kind of bad URL meets three commands (they
    # share one opening path). Each pair once: ``COMMANDS * 2`` drew the same URL for command
    # i and command i + 9, so it ran every pair twice.
    cases = [(c, BAD_URLS[i % len(BAD_URLS)]) for i, c in enumerate(COMMANDS)]
    cases += [(c, missing) for c in READ_ONLY]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda case: _refusal(*case), cases))
    for (command, url), (code, stderr, seconds) in zip(cases, results, strict=True):
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert code == 2, (command, url, stderr)
        assert len(lines) == 1 and lines[0].startswith("error: cannot open database "), (
            command,
            stderr,
        )
        assert "secret" not in stderr and ("***" in stderr or "secret" not in url)
        # Refused without hanging on a connection; bounded generously (two at a time on a
        # busy machine), below the 30 s after which the command counts as hung.
        assert seconds < 25, (command, url, seconds)
    assert not Path(missing).exists()  # read-only commands never create a database
