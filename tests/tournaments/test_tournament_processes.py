"""Tournaments end to end with real processes: ``arena serve``, ``arena-bot``, the CLI.

Every server is a real ``python -m arena serve`` on port 0 over a SQLite file
under ``tmp_path``; every bot a real ``arena-bot`` process with a built-in
strategy (``random`` is instant); ``arena tournament ...`` runs as its own
process and finds the server through the admin file. One test kills the
server with SIGKILL in the middle of a tournament and restarts it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.arena.serve_process import ServeProcess, add_bots, arena

GAME = "tictactoe"


class Bots:
    """``arena-bot`` processes, each in its own process group, killed at the end."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, url: str, tokens: dict[str, str], strategy: str = "random") -> None:
        for name, token in tokens.items():
            self.procs.append(
                subprocess.Popen(
                    [
                        sys.executable, "-m", "bots.client.cli", "--url", url, "--name", name,
                        "--game", GAME, "--strategy", strategy, "--no-seek", "--retry-max", "0.5",
                        "--quiet",
                    ],
                    env={**os.environ, "ARENA_BOT_TOKEN": token},
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )  # fmt: skip

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture
def bots() -> Iterator[Bots]:
    group = Bots()
    yield group
    group.stop()


@pytest.fixture
def servers() -> Iterator[list[ServeProcess]]:
    started: list[ServeProcess] = []
    yield started
    for server in started:
        if server.process is not None and server.process.poll() is None:
            server.process.kill()
            server.process.wait(10)


def status_of(db: str, tournament_id: int) -> dict[str, Any]:
    done = arena("tournament", "status", str(tournament_id), "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    status: dict[str, Any] = json.loads(done.stdout)
    return status


def read_file(db: str | Path, sql: str, *args: Any) -> Any:
    """The first row of ``sql`` on the SQLite file, or None when it cannot be read yet: no file
    (connecting would make one, under the process about to), no table, or a write lock."""
    if not Path(db).exists():
        return None
    with (
        contextlib.suppress(sqlite3.OperationalError),
        contextlib.closing(sqlite3.connect(db, timeout=0.05)) as connection,
    ):
        return connection.execute(sql, args).fetchone()
    return None


def wait_finished(db: str, tournament_id: int, timeout: float = 90.0) -> dict[str, Any]:
    """Poll the SQLite file until the tournament's row says finished; then what ``arena
    tournament status`` says of it. (Polling with the command cost a Python start-up, about
    a second of CPU, every 0.2 s, taken from the server and bots being waited for.)"""
    deadline = time.monotonic() + timeout
    found = None
    while time.monotonic() < deadline:
        found = read_file(db, "SELECT status FROM tournaments WHERE id = ?", tournament_id)
        if found == ("finished",):
            return status_of(db, tournament_id)
        time.sleep(0.05)
    raise AssertionError(f"the tournament did not finish: {found}")


def wait_for_file(db: Path, test: Any, timeout: float = 90.0) -> None:
    """Poll the SQLite file until ``test(finished, live)`` holds for the tournament matches."""
    deadline = time.monotonic() + timeout
    counts: tuple[int, int] = (0, 0)
    while time.monotonic() < deadline:
        found = read_file(
            db,
            "SELECT count(*) FILTER (WHERE status = 'finished'),"
            " count(*) FILTER (WHERE status = 'live')"
            " FROM matches WHERE tournament_id IS NOT NULL",
        )
        if found is not None:
            counts = found
            if test(*counts):
                return
        time.sleep(0.005)
    raise AssertionError(f"the tournament's matches did not get there: {counts}")


def finished_per_slot(db: Path) -> dict[tuple[int, int], int]:
    """(pair, first player's bot id) -> finished matches, read straight from the file."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT tournament_pair, player0_id, count(*) FROM matches"
            " WHERE status = 'finished' GROUP BY tournament_pair, player0_id"
        ).fetchall()
        outside = connection.execute(
            "SELECT count(*) FROM matches WHERE tournament_id IS NULL"
        ).fetchone()[0]
    assert outside == 0  # --no-seek bots play the tournament's games only
    return {(pair, player): count for pair, player, count in rows}


def test_round_robin_survives_sigkill_and_counts_every_pair_once(
    tmp_path: Path, bots: Bots, servers: list[ServeProcess]
) -> None:
    db_path = tmp_path / "arena.db"
    db = str(db_path)
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob", "carol")
    book = tmp_path / "book.txt"
    book.write_text("# the centre, and a corner answered in the centre\n4\n0 4\n")
    # A pause between moves makes the 12 games last seconds, so the kill lands midway.
    first = ServeProcess(db, "--pace-ms", "60", "--db-writer", "inline").start()
    servers.append(first)
    admin = Path(f"{db_path}.admin.json")
    assert admin.stat().st_mode & 0o777 == 0o600
    created = arena(
        "tournament", "create", "--db", db, "--game", GAME, "--format", "round-robin",
        "--bots", "alice,bob,carol", "--games-per-pair", "4", "--openings", str(book),
        "--move-ms", "5000", "--name", "killed midway",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert "on the server at http://127.0.0.1:" in created.stdout
    tid = int(created.stdout.split()[2])
    bots.start(first.url, tokens)
    # Read the file itself, fast: the kill must land while a game is being played.
    wait_for_file(db_path, lambda finished, live: finished >= 3 and live >= 1)
    assert first.process is not None
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(10)
    # Killed: the admin file stays behind, naming a dead process; status reads the file.
    assert admin.exists()
    midway = status_of(db, tid)["progress"]["counted"]
    assert 3 <= midway < 12

    second = ServeProcess(db, "--db-writer", "inline").start()
    servers.append(second)
    bots.stop()
    bots.start(second.url, tokens)  # the port changed: bots come back on the new one
    final = wait_finished(db, tid)
    assert final["progress"]["counted"] == 12
    assert final["progress"]["pairs_complete"] == 6
    assert all(m["pairs"] == 2 and sum(m["pentanomial"]) == 2 for m in final["meetings"])
    cells = final["crosstable"]["cells"]
    assert all(cells[i][j]["games"] == 4 for i in range(3) for j in range(3) if i != j)
    assert {g["opening"] for g in final["games"]} == {"4", "0 4"}
    assert set(finished_per_slot(db_path).values()) == {1}
    assert len(finished_per_slot(db_path)) == 12
    with contextlib.closing(sqlite3.connect(db_path)) as connection:
        aborted = connection.execute(
            "SELECT count(*), min(fault) FROM matches WHERE status = 'aborted'"
        ).fetchone()
    assert aborted[0] >= 1 and aborted[1] == "infrastructure"  # the killed one, replayed
    listing = arena("tournament", "list", "--db", db)
    assert "killed midway" in listing.stdout and "finished" in listing.stdout
    exported = arena("tournament", "export", str(tid), "--db", db)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(rows) == 12 and all(r["moves"][: len(r["opening"].split())] for r in rows)
    assert second.stop() == 0
    assert not admin.exists()


def test_create_without_a_server_starts_when_one_does(
    tmp_path: Path, bots: Bots, servers: list[ServeProcess]
) -> None:
    db = str(tmp_path / "arena.db")
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    created = arena(
        "tournament", "create", "--db", db, "--game", GAME, "--format", "gauntlet",
        "--challenger", "alice", "--bots", "bob", "--games-per-pair", "4", "--concurrency", "2",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert "it starts when `arena serve` runs" in created.stdout
    assert "pending" in arena("tournament", "list", "--db", db).stdout
    server = ServeProcess(db, "--db-writer", "inline").start()
    servers.append(server)
    bots.start(server.url, tokens)
    final = wait_finished(db, 1)
    assert final["progress"]["counted"] == 4
    paused = arena("tournament", "pause", "1", "--db", db)
    assert (paused.returncode, paused.stderr.strip()) == (
        2, "error: tournament 1 is finished: cannot pause it"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "alice,zed"], "error: unknown bot zed (register with `arena bots add`)"),
        (["--bots", "alice,bob,alice"], "error: bot alice is entered twice (one bot, one seat)"),
        (["--bots", "alice"], "error: a tournament needs at least two bots"),
        (["--bots", "alice,bob", "--openings", "BOOK"], "error: BOOK:2: illegal move 4 at ply 1:"),
        (
            ["--bots", "alice,bob", "--format", "sprt", "--elo0", "5", "--elo1", "5"],
            "error: --elo0 must be below --elo1 (got 5 and 5)",
        ),
        (
            ["--bots", "alice,bob", "--format", "sprt", "--elo0", "0", "--elo1", "5",
             "--alpha", "0.5"],
            "error: --alpha must be within (0, 0.5), got 0.5",
        ),
        (
            ["--bots", "alice,bob", "--format", "sprt", "--elo0", "0", "--elo1", "5",
             "--beta", "0"],
            "error: --beta must be within (0, 0.5), got 0.0",
        ),
        (["--bots", "alice,bob", "--format", "gauntlet"], "error: a gauntlet needs --challenger"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_creates_nothing(
    two_bots: tuple[str, Path], args: list[str], message: str
) -> None:
    db, book = two_bots
    args = [str(book) if a == "BOOK" else a for a in args]
    message = message.replace("BOOK", str(book))
    done = arena("tournament", "create", "--db", db, "--game", GAME, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr
    with contextlib.closing(sqlite3.connect(db)) as connection:
        assert connection.execute("SELECT count(*) FROM tournaments").fetchone() == (0,)


@pytest.fixture(scope="module")
def two_bots(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A database with alice and bob (shared: a refused create leaves it unchanged)."""
    folder = tmp_path_factory.mktemp("bad-input")
    db = str(folder / "arena.db")
    add_bots(db, folder / "tokens", "alice", "bob")
    book = folder / "book.txt"
    book.write_text("4\n4 4\n")
    return db, book


def test_run_local_sprt_of_mcts_against_random_ends_with_h1(tmp_path: Path) -> None:
    db = tmp_path / "local.db"
    done = subprocess.run(
        [
            sys.executable, "-m", "arena", "tournament", "run", "--db", str(db),
            "--game", "connect4", "--format", "sprt", "--elo0", "0", "--elo1", "100",
            "--move-ms", "300", "--local", "mcts:sims=2000,workers=1", "random",
        ],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "H1 accepted after" in done.stdout
    status = status_of(str(db), 1)
    assert status["sprt"]["verdict"] == "H1"
    assert status["standings"][0]["bot"] == "mcts-sims2000-workers1"
    assert (tmp_path / "arena-tournament-tokens.json").stat().st_mode & 0o777 == 0o600


def test_run_local_stops_on_sigint_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "local.db"
    command = [
        sys.executable, "-m", "arena", "tournament", "run", "--db", str(db), "--game", "connect4",
        "--format", "gauntlet", "--games-per-pair", "8", "--move-ms", "1000",
        "--local", "alphabeta:time_ms=40", "greedy", "random",
    ]  # fmt: skip
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_file(db, lambda finished, live: finished >= 2, timeout=60)
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 130, err
    assert "the same command with --resume continues it" in out
    stopped = status_of(str(db), 1)
    assert stopped["status"] == "paused" and stopped["progress"]["counted"] < 16
    again = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode == 2 and "continue it with --resume" in again.stderr
    resumed = subprocess.run(
        [*command, "--resume"], capture_output=True, text=True, timeout=180, check=False
    )
    assert resumed.returncode == 0, resumed.stderr
    final = status_of(str(db), 1)
    assert final["status"] == "finished" and final["progress"]["counted"] == 16
    assert [m["pairs"] for m in final["meetings"]] == [4, 4]


def test_run_local_refuses_a_strategy_it_does_not_know_before_starting(tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    done = arena(
        "tournament", "run", "--db", str(db), "--game", "connect4",
        "--local", "alphazero:sims=800", "random",
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("error: --local 'alphazero:sims=800': unknown strategy")
    assert done.stderr.count("\n") == 1 and not db.exists()


def _bots_on_port(port: int) -> list[int]:
    """Pids of arena-bot processes connecting to ``port``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if b"bots.client.cli" in argv and f"ws://127.0.0.1:{port}".encode() in argv:
                    found.append(int(entry.name))
    return found


def test_bots_stop_when_run_local_is_killed_and_the_run_resumes(tmp_path: Path) -> None:
    db = tmp_path / "local.db"
    command = [
        sys.executable, "-m", "arena", "tournament", "run", "--db", str(db), "--game", "connect4",
        "--games-per-pair", "6", "--move-ms", "1000", "--local", "alphabeta:time_ms=40", "greedy",
    ]  # fmt: skip
    runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert runner.stdout is not None
        port = int(runner.stdout.readline().split("server on port ")[1].split(",")[0])
        # The file itself, read fast: the kill lands while a game is live.
        wait_for_file(db, lambda finished, live: finished >= 1 and live >= 1, timeout=60)
        assert len(_bots_on_port(port)) == 2
        runner.kill()  # SIGKILL: no chance to stop the bots itself
        runner.wait(10)
        deadline = time.monotonic() + 10
        while _bots_on_port(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _bots_on_port(port) == []  # they got SIGHUP when their parent died
    finally:
        if runner.poll() is None:
            runner.kill()
    resumed = subprocess.run(
        [*command, "--resume"], capture_output=True, text=True, timeout=120, check=False
    )
    assert resumed.returncode == 0, resumed.stderr
    assert status_of(str(db), 1)["progress"]["counted"] == 6


def test_bots_of_a_killed_run_local_die_with_it_without_a_shutdown(tmp_path: Path) -> None:
    """They and their search workers are killed by the kernel (SIGKILL), not left to resign,
    close or finish a warm-up for seconds (they got SIGHUP before, and workers nothing):
    ``reaper.py`` inherits them and reads how they ended."""
    db = tmp_path / "local.db"
    command = [
        sys.executable, "-m", "arena", "tournament", "run", "--db", str(db), "--game", "connect4",
        "--games-per-pair", "6", "--move-ms", "1000", "--local", "alphabeta:time_ms=40",
        "mcts:time_ms=200",
    ]  # fmt: skip
    reaper = Path(__file__).with_name("reaper.py")
    done = subprocess.run(
        [sys.executable, str(reaper), str(db), *command],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    ended = json.loads(done.stdout)
    # Two bots and the MCTS bot's search workers, killed by the kernel as their parents died
    # (the resource trackers exit by themselves once their bot is gone).
    assert ended["signals"].count(signal.SIGKILL) >= 3, done
    assert set(ended["signals"]) <= {signal.SIGKILL, None}, done
