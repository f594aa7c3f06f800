"""The load bench end to end (a real `arena serve`, real bots, a real SQLite file) and its wire."""

from __future__ import annotations

import asyncio
import pstats
import shutil
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest
from websockets.asyncio.server import ServerConnection, serve

from bench.load.__main__ import check_db, main, run_once
from bench.load.bots import ANALYSIS
from bench.load.report import Config, table
from bench.load.wire import Wire

pytestmark = pytest.mark.bench


def test_a_short_run_counts_moves_measures_cpu_and_checks_the_database(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'load.db'}"
    # A few matches, paired at once, sampled as a soak every 20 finished matches.
    config = Config(matches=4, seconds=1.5, warmup=0.5, pairing_window_s=0.02, db=db, soak_every=20)
    run = run_once(config)
    assert run.window_moves > 0 and run.moves >= run.window_moves
    assert len(run.server_ms) == len(run.client_ms) == run.window_moves
    # The kernel received each moved before the bot's loop handled it (clocks 0.5 ms apart).
    assert all(0.0 < s <= c + 0.5 for s, c in zip(run.server_ms, run.client_ms, strict=True))
    assert run.window_ended > 0 and 0.0 < run.live <= 4.0
    assert not run.errors, run.errors
    server, writer, bots, _postgres = run.cpu
    assert server > 0.0 and writer > 0.0 and bots > 0.0  # the writer is the server's child
    assert run.db_ok, run.db_note
    assert run.db_note.startswith(f"{run.moves} moves stored / {run.moves} confirmed")
    assert table([run]).splitlines()[2].split()[-2:] == ["OK", "missed"]  # 4 matches < 500
    # The soak samples: every 20 finished matches, the server's RSS and its /healthz.
    assert [mark[0] for mark in run.soak] == [20 * (i + 1) for i in range(len(run.soak))]
    assert run.soak and all(mark[2] > 10.0 and mark[3]["status"] == "ok" for mark in run.soak)

    # The check fails once a confirmed move is missing from the database.
    with sqlite3.connect(tmp_path / "load.db") as conn:
        conn.execute("DELETE FROM moves WHERE rowid = (SELECT max(rowid) FROM moves)")
    ok, note = asyncio.run(check_db(db, "load", run))
    assert not ok and note.endswith("1 differ")


def test_with_analysis_every_move_stores_the_report(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'load.db'}"
    run = run_once(Config(matches=2, seconds=1.0, warmup=0.3, db=db, analysis="tree"))
    assert run.db_ok and not run.errors, (run.db_note, run.errors)
    assert table([run]).splitlines()[2].split()[5] == "tree"
    with sqlite3.connect(tmp_path / "load.db") as conn:
        stored = [text for (text,) in conn.execute("SELECT analysis FROM moves")]
    # Every move the bots played carries the report; the moves of the rated opening a match
    # starts from are the server's and carry none.
    reports = [text for text in stored if text is not None]
    assert len(stored) == run.moves and len(reports) > len(stored) / 2
    assert all(text == ANALYSIS for text in reports) and '"tree":[' in ANALYSIS


@pytest.mark.skipif(shutil.which("callgrind_control") is None, reason="needs valgrind")
def test_callgrind_counts_the_servers_instructions_over_the_window(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'load.db'}"
    config = Config(matches=2, seconds=3.0, warmup=1.0, think_ms=20.0, db=db, callgrind=True)
    run = run_once(config)
    assert run.db_ok and not run.errors, (run.db_note, run.errors)
    assert 0 < run.counted_moves <= run.moves
    # A move costs the server some hundreds of thousands of instructions (Python included):
    # far more than the loop's idle ticks, far less than its start-up (not counted).
    assert 20_000 < run.instructions_per_move < 5_000_000, run.instructions_per_move


def test_profile_writes_the_servers_statistics(tmp_path: Path) -> None:
    out = tmp_path / "server.prof"
    config = Config(matches=2, seconds=1.0, warmup=0.3, db=f"sqlite+aiosqlite:///{tmp_path}/l.db")
    run = run_once(replace(config, profile=str(out)))
    assert run.db_ok, run.db_note
    functions = {name for (_, _, name) in pstats.Stats(str(out)).stats}  # type: ignore[attr-defined]
    assert "parse_compact_move" in functions  # the moves went through the profiled server


@pytest.mark.parametrize("args", [["--think-jitter", "1.5"], ["--repeat", "0"]])
def test_bad_options_are_refused_before_anything_runs(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    assert "--think-jitter fractions from 0 to 1" in capsys.readouterr().err


async def test_the_wire_speaks_websocket_and_stamps_each_read_with_the_kernel_time() -> None:
    async def echo(connection: ServerConnection) -> None:
        async for message in connection:
            await connection.send(message)
        await connection.close()

    async with serve(echo, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        received: list[tuple[bytes, int]] = []
        url = f"ws://127.0.0.1:{port}/"
        wire = await Wire.open(url, lambda text: received.append((text, wire.received_ns)), 5.0)
        before = time.time_ns()
        for text in ("hello", "x" * 100_000):  # the second one spans several reads
            wire.send(text)
        while len(received) < 2:
            await asyncio.sleep(0.01)
        assert [t for t, _ in received] == [b"hello", b"x" * 100_000]
        assert all(before <= stamp <= time.time_ns() for _, stamp in received)
        wire.close()
        assert await asyncio.wait_for(wire.lost, 5) is None
        wire.send("after the end")  # dropped, not raised
