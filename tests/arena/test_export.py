"""``arena export`` as a process, against matches played on a real server: each exported
record is the API's view of that match plus the ratings going in, in both formats."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

from http_schema import check_def
from test_server_http import http_get

from arena.server import ArenaServer
from protocol.messages import MatchEnd, YourTurn


def export(db: str, *options: str) -> subprocess.CompletedProcess[str]:
    """``python -m arena export --db DB OPTIONS`` to its end."""
    return subprocess.run(
        [sys.executable, "-m", "arena", "export", "--db", db, *options],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def play_out(pair: Any, x_moves: list[int], o_moves: list[int]) -> MatchEnd:
    """Seat 0 plays ``x_moves``, seat 1 ``o_moves``, alternating until the match ends."""
    for ply in range(len(x_moves) + len(o_moves)):
        mover, moves = (pair.x, x_moves) if ply % 2 == 0 else (pair.o, o_moves)
        turn = await mover.expect(YourTurn)
        await mover.move(turn, moves[ply // 2])
    end: MatchEnd = await pair.x.expect(MatchEnd)
    await pair.o.expect(MatchEnd)
    return end


async def test_export_is_the_api_view_plus_ratings_before(
    server: ArenaServer, start_match: Any
) -> None:
    db = server.store.engine.url.render_as_string(hide_password=False)
    first = await start_match("alice", "bob", game="connect4")
    await play_out(first, [0, 0, 0, 0], [1, 1, 1])  # a vertical four: 1-0 in 7 plies
    second = await start_match("carol", "alice", game="connect4")
    await play_out(second, [6, 6, 6, 6], [5, 5, 5])
    other = await start_match("bob", "dave", game="tictactoe")
    await play_out(other, [0, 1, 2], [3, 4])

    done = export(db, "--game", "connect4")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in records] == [first.match_id, second.match_id]  # oldest first
    going_in: list[dict[str, float]] = []
    for record in records:
        check_def("ExportRecord", record)
        _, _, api = await http_get(server.port, f"/api/matches/{record['id']}")
        ratings_before = record.pop("ratings_before")
        assert api.pop("solved") == []  # the API's analysis of the moves is not exported
        assert record == api
        before = {change["bot"]: change["before"] for change in api["rating_changes"]}
        assert ratings_before == [before[p] for p in api["players"]]
        going_in.append(dict(zip(api["players"], ratings_before, strict=True)))
    # alice's second match starts from where her first one left her.
    alice_after_first = {c["bot"]: c["after"] for c in records[0]["rating_changes"]}["alice"]
    assert going_in[0]["alice"] == 1500.0 != alice_after_first == going_in[1]["alice"]
    assert [m["think_ms"] >= 0 for m in records[0]["moves"]] == [True] * 7

    moves = export(db, "--game", "connect4", "--format", "moves")
    assert moves.stdout.splitlines() == ["1212121", "7676767"]
    only_bob = export(db, "--game", "connect4", "--bot", "bob")
    assert [json.loads(line)["id"] for line in only_bob.stdout.splitlines()] == [first.match_id]
    assert export(db, "--game", "connect4", "--since", "2999-01-01").stdout == ""
    since = export(db, "--game", "connect4", "--since", records[1]["started_at"])
    assert [json.loads(line)["id"] for line in since.stdout.splitlines()] == [second.match_id]
    [ttt] = export(db, "--game", "tictactoe").stdout.splitlines()
    assert [m["move"] for m in json.loads(ttt)["moves"]] == [0, 3, 1, 4, 2]


async def test_export_refusals_are_one_line(server: ArenaServer) -> None:
    db = server.store.engine.url.render_as_string(hide_password=False)
    done = export(db, "--game", "tictactoe", "--format", "moves")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "error: --format moves is Connect Four's column notation; use --format jsonl for "
        "tictactoe\n"
    )
    missing = export("sqlite+aiosqlite:////nonexistent/dir/arena.db", "--game", "connect4")
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    bad_date = export(db, "--game", "connect4", "--since", "yesterday")
    assert bad_date.returncode == 2 and "expected an ISO date" in bad_date.stderr


async def test_export_with_only_a_server_writes_the_same_lines(
    server: ArenaServer, start_match: Any
) -> None:
    db = server.store.engine.url.render_as_string(hide_password=False)
    first = await start_match("alice", "bob", game="connect4")
    await play_out(first, [0, 0, 0, 0], [1, 1, 1])
    second = await start_match("carol", "dave", game="connect4")
    await play_out(second, [6, 6, 6, 6], [5, 5, 5])
    third = await start_match("bob", "alice", game="connect4")
    await play_out(third, [3, 3, 3, 3], [2, 2, 2])
    url = f"ws://127.0.0.1:{server.port}"
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DB"}
    for options in (["--bot", "alice"], ["--format", "moves"], ["--since", "2000-01-01"]):
        command = [sys.executable, "-m", "arena", "export", "--game", "connect4", *options]
        remote = await asyncio.to_thread(  # the server answers meanwhile
            subprocess.run, [*command, "--server", url], capture_output=True, text=True, env=env
        )
        local = export(db, "--game", "connect4", *options)
        assert remote.returncode == 0, remote.stderr
        assert remote.stdout == local.stdout and remote.stdout.count("\n") >= 2, options
    assert [json.loads(line)["id"] for line in remote.stdout.splitlines()] == [
        first.match_id,
        second.match_id,
        third.match_id,
    ]
