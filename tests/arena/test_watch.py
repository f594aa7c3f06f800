"""``arena watch`` as a real subprocess against a real server, with two scripted bots.

The watcher's stdout is a pipe, so it prints every new position (non-terminal
mode); the tests read what it printed and check moves, boards and results.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from arena.live.watch import MatchView, render
from arena.server import ArenaServer
from protocol.messages import Moved, Snapshot, YourTurn, parse_server_message

TIMEOUT_S = 15.0

# Tic-tac-toe: x takes the top row (cells 0, 1, 2) while o plays 3 and 4.
X_WINS = (0, 3, 1, 4, 2)


class Watcher:
    """``python -m arena watch ...`` with its stdout read line by line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    async def wait_for(self, text: str) -> None:
        """Read output until a line containing ``text`` (fails after ``TIMEOUT_S``)."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(TIMEOUT_S):
            while True:
                raw = await self.proc.stdout.readline()
                if not raw:
                    err = await self.proc.stderr.read() if self.proc.stderr else b""
                    raise AssertionError(
                        f"watch ended before {text!r}: {self.lines}; stderr: {err.decode()}"
                    )
                self.lines.append(raw.decode().rstrip("\n"))
                if text in self.lines[-1]:
                    return

    async def finish(self) -> tuple[int, str, str]:
        """Wait for the exit; returns status, all stdout and stderr."""
        out, err = await asyncio.wait_for(self.proc.communicate(), TIMEOUT_S)
        self.lines += out.decode().splitlines()
        return self.proc.returncode or 0, "\n".join(self.lines), err.decode()


@pytest.fixture
async def watch(server: ArenaServer) -> AsyncIterator[Callable[..., Any]]:
    started: list[asyncio.subprocess.Process] = []

    async def factory(*args: str) -> Watcher:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "arena",
            "watch",
            "--url",
            f"ws://127.0.0.1:{server.port}",
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        started.append(proc)
        return Watcher(proc)

    yield factory
    for proc in started:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def play(pair: Any, moves: tuple[int, ...], start_ply: int = 0) -> None:
    """Seats alternate from ``start_ply``; each answers its ``your_turn``."""
    for ply, move in enumerate(moves, start_ply):
        client = pair.seat(ply % 2)
        turn = await client.expect(YourTurn)
        assert turn.ply == ply
        await client.move(turn, move)
        await client.expect(Moved)


async def test_watch_waits_for_the_next_match_and_prints_each_move_and_the_result(
    server: ArenaServer, start_match: Any, watch: Any
) -> None:
    watcher = await watch()
    await watcher.wait_for("waiting for a live match")
    pair = await start_match(game="tictactoe")
    x, o = pair.names
    await watcher.wait_for(f"match {pair.match_id}  tictactoe  {x} (x, 1500) vs {o} (o, 1500)")
    await play(pair, X_WINS)
    code, out, err = await watcher.finish()
    assert code == 0, err
    for ply, move in enumerate(X_WINS):
        mover = pair.names[ply % 2]
        assert f"ply {ply}: {mover} ({'xo'[ply % 2]}) plays {move}" in out
    assert "x x x\no o .\n. . ." in out  # the final board, drawn by the game's render()
    assert "result 1-0 (line)" in out and f"winner {x}" in out
    assert "; rated" in out and " -> " not in out  # one rating: the result shows no Elo change


async def test_watch_by_id_joins_mid_match_and_follow_goes_on_to_the_next(
    server: ArenaServer, start_match: Any, watch: Any
) -> None:
    pair = await start_match(game="tictactoe")
    await play(pair, X_WINS[:2])
    watcher = await watch(pair.match_id, "--follow")
    # The snapshot has the two moves already played and both clocks.
    await watcher.wait_for("moves (2): 0 3")
    assert any(line.startswith("clocks: ") for line in watcher.lines)
    await pair.o.send(type="resign", match_id=pair.match_id)
    await watcher.wait_for("result 1-0 (resign)")
    # The same two bots seek again; the watcher picks up their next match.
    second = await start_match(game="tictactoe")
    await watcher.wait_for(f"match {second.match_id}")
    await play(second, X_WINS[:1])
    await watcher.wait_for("ply 0:")
    watcher.proc.send_signal(signal.SIGINT)
    code, _, _ = await watcher.finish()
    assert code == 130


async def test_watch_of_a_finished_match_shows_it_and_of_an_unknown_one_fails(
    server: ArenaServer, start_match: Any, watch: Any
) -> None:
    pair = await start_match(game="tictactoe")
    await play(pair, X_WINS)
    code, out, err = await (await watch(pair.match_id)).finish()
    assert code == 0, err
    assert "moves (5): 0 3 1 4 2" in out and "result 1-0 (line)" in out
    code, out, err = await (await watch("no-such-match")).finish()
    assert code == 1 and "no_such_match" in err


def test_render_shows_players_board_clocks_moves_and_analysis() -> None:
    snapshot = parse_server_message(
        '{"type":"snapshot","match_id":"m-1","game":"connect4","players":["a","b"],'
        '"ratings":[1500.0,1490.4],"time_control":{"move_ms":1000,"bank_ms":500},'
        '"moves":[3],"position":"......./......./......./......./......./...x... o",'
        '"clocks":{"time_left_ms":[1500,1200],"bank_ms":[500,200]},"status":"live",'
        '"last_event":1,"end":null,"analysis":{"simulations":900,"value":0.25,"tree":['
        '{"move":2,"visits":300},{"move":3,"visits":500},{"move":4,"visits":200,"parent":1},'
        '{"move":1,"visits":250,"parent":1},{"move":5,"visits":90,"parent":3}]}}'
    )
    assert isinstance(snapshot, Snapshot)
    text = render(MatchView.from_snapshot(snapshot))
    assert "last search: 900 simulations, value +0.25, line 3 1 5" in text
    assert text.splitlines()[0] == (
        "match m-1  connect4  a (x, 1500) vs b (o, 1490)  1000 ms/move + 500 ms bank"
    )
    assert ". . . x . . ." in text
    assert "clocks: a 1.5 s   b 1.2 s <" in text  # b is to move
    assert "moves (1): 3" in text and "last search: 900 simulations, value +0.25" in text


async def test_watch_numbers_connect4_columns_as_the_moves_are(
    server: ArenaServer, start_match: Any, watch: Any
) -> None:
    watcher = await watch()
    await watcher.wait_for("waiting for a live match")
    pair = await start_match(game="connect4")
    await play(pair, (0, 6))
    await watcher.wait_for("plays 6")
    await watcher.wait_for("0 1 2 3 4 5 6")  # the labels under the board after move 6
    board = watcher.lines[-7:]
    labels = board[-1].split(" ")
    bottom = board[-2].split(" ")
    # The disc played as move 0 sits over the label 0, and move 6's over the label 6.
    assert (bottom[labels.index("0")], bottom[labels.index("6")]) == ("x", "o")
    assert "ply 1: " in watcher.lines[-8] and "plays 6" in watcher.lines[-8]


def test_render_names_each_search_count_for_what_it_counts() -> None:
    snapshot = parse_server_message(
        '{"type":"snapshot","match_id":"m-1","game":"connect4","players":["a","b"],'
        '"ratings":null,"time_control":{"move_ms":1000,"bank_ms":0},'
        '"moves":[3],"position":"......./......./......./......./......./...x... o",'
        '"clocks":{"time_left_ms":[1000,1000],"bank_ms":[0,0]},"status":"live",'
        '"last_event":1,"end":null,'
        '"analysis":{"nodes":48213,"nodes_per_s":950000.0,"depth":9,"value":0.25}}'
    )
    assert isinstance(snapshot, Snapshot)
    text = render(MatchView.from_snapshot(snapshot))
    assert "last search: 48213 nodes, depth 9, value +0.25" in text
    assert "simulations" not in text
    assert text.splitlines()[8] == "0 1 2 3 4 5 6"
