"""``arena demo`` end to end: a real subprocess, real bot subprocesses, a real SQLite file.

Each run uses tic-tac-toe with fast bots (short games), port 0 and a database
under ``tmp_path``. The demo prints its URL and every bot's pid; the tests use
them to query the HTTP API while it runs and to check that no process (bot,
or a bot's search worker) is left afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from arena.cli.demo import TOKENS_FILE, DemoOptions, bot_argv, demo_dir
from arena.provision import ensure_bot, read_token_map, write_token_map
from arena.store import Store

BOTS = "random,greedy,mcts-200"
GAME = "tictactoe"


class Demo:
    """A running ``arena demo`` whose stdout is read up to the banner's end."""

    def __init__(self, tmp_path: Path, *extra: str) -> None:
        self.db = tmp_path / "demo.db"
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "arena", "demo",
                "--port", "0", "--db", str(self.db), "--game", GAME, "--bots", BOTS,
                "--move-ms", "500", "--pace-ms", "0", "--refresh", "0.5", *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        self.banner: list[str] = []
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.banner.append(line.rstrip("\n"))
            if "Ctrl-C" in line:
                break
        text = "\n".join(self.banner)
        found = re.search(r"viewer:\s+(http://127\.0\.0\.1:\d+/)", text)
        assert found, f"no viewer URL in {text!r}; stderr: {self.proc.stderr}"
        self.url = found.group(1)
        self.pids = [int(p) for p in re.findall(r"^bot \S+\s+pid (\d+)", text, re.M)]
        assert len(self.pids) == 3, text

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=5) as response:
            body = response.read()
        return json.loads(body) if path.startswith(("api", "/api", "/healthz")) else body

    def wait_for_rated(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Poll ``/api/leaderboard`` until ``count`` rated matches finished this run."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            entries: list[dict[str, Any]] = self.get(f"/api/leaderboard?game={GAME}")["entries"]
            if sum(e["games"] for e in entries) // 2 >= count:
                return entries
            time.sleep(0.3)
        raise AssertionError(f"fewer than {count} rated matches after {timeout} s")

    def finish(self, timeout: float = 30.0) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, "\n".join(self.banner) + "\n" + out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in self.pids:  # a failed test must not leave bots reconnecting forever
            for victim in _group_members(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(victim, signal.SIGKILL)


def _group_members(pgid: int) -> list[int]:
    """Processes whose process group is ``pgid`` (a bot and its search workers)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the ")" closing the command name: state, ppid, pgrp, ...
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def assert_no_process_left(pids: list[int]) -> None:
    leftovers = {pid: _group_members(pid) for pid in pids}
    assert not any(leftovers.values()), f"processes left behind: {leftovers}"
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


async def stored(db: Path) -> tuple[list[Any], list[Any]]:
    """All matches and the leaderboard, read back from the file by a fresh store."""
    store = await Store.open(f"sqlite+aiosqlite:///{db}")
    try:
        return await store.list_matches(limit=100_000), await store.leaderboard(GAME)
    finally:
        await store.close()


@pytest.fixture
def demo(tmp_path: Path) -> Any:
    started: list[Demo] = []

    def factory(*extra: str) -> Demo:
        started.append(Demo(tmp_path, *extra))
        return started[-1]

    yield factory
    for running in started:
        running.kill()


@pytest.mark.slow
def test_demo_runs_rated_matches_serves_http_and_stops_by_itself(demo: Any, tmp_path: Path) -> None:
    run = demo("--duration", "8")
    assert run.get("/healthz")["status"] == "ok"
    assert b"<html" in run.get("/").lower()  # the web viewer is wired in
    during = run.wait_for_rated(3)
    assert {e["bot"] for e in during} <= {"random", "greedy", "mcts-200"}
    code, out, err = run.finish()
    assert code == 0, err
    assert re.search(r"demo stopped after [\d.]+ s: \d+ rated matches this run", out)
    assert "[" in out and "rated" in out  # line-based updates, stdout being a pipe
    assert_no_process_left(run.pids)

    matches, board = asyncio.run(stored(run.db))
    finished = [m for m in matches if m.status == "finished"]
    assert len(finished) >= 3 and all(m.rated for m in finished)
    assert not [m for m in matches if m.status == "live"]
    assert sum(row.games for row in board) == 2 * len(finished)
    assert any(row.rating != 1500.0 for row in board)
    tokens = tmp_path / TOKENS_FILE
    assert tokens.stat().st_mode & 0o777 == 0o600
    assert set(read_token_map(tokens)) == {"random", "greedy", "mcts-200"}


@pytest.mark.slow
def test_demo_sigint_stops_bots_then_server_and_loses_nothing(demo: Any) -> None:
    run = demo()
    seen = run.wait_for_rated(2)
    run.proc.send_signal(signal.SIGINT)
    code, out, err = run.finish()
    assert code == 0, err
    assert_no_process_left(run.pids)
    final = re.search(r"demo stopped after [\d.]+ s: (\d+) rated matches this run", out)
    assert final, out

    matches, board = asyncio.run(stored(run.db))
    finished = [m for m in matches if m.status == "finished"]
    assert len(finished) == int(final.group(1)) >= sum(e["games"] for e in seen) // 2
    assert sum(row.games for row in board) == 2 * len(finished)
    # Whatever was still live was aborted by the server as its own fault, unrated.
    assert not [m for m in matches if m.status == "live"]
    for aborted in (m for m in matches if m.status == "aborted"):
        assert (aborted.rated, aborted.fault, aborted.result) == (False, "infrastructure", "*")


async def test_demo_tokens_are_kept_then_reissued_when_lost(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    store = await Store.open(f"sqlite+aiosqlite:///{db}")
    try:
        first, action = await ensure_bot(store, "random")
        assert action == "added" and await store.authenticate("random", first)
        assert await ensure_bot(store, "random", first) == (first, "kept")
        again, action = await ensure_bot(store, "random", "a-lost-or-wrong-token")
        assert action == "reissued" and again != first
        assert await store.authenticate("random", again)
        assert await store.authenticate("random", first) is None
        await store.remove_bot("random")
        revived, action = await ensure_bot(store, "random", again)
        assert action == "reissued" and await store.authenticate("random", revived)
    finally:
        await store.close()
    path = tmp_path / TOKENS_FILE
    write_token_map(path, {"b": "2", "a": "1"})
    assert read_token_map(path) == {"a": "1", "b": "2"}
    assert path.stat().st_mode & 0o777 == 0o600
    path.write_text("not json")
    assert read_token_map(path) == {}


def test_demo_options_files_and_bot_command(tmp_path: Path) -> None:
    from arena.cli.main import build_parser

    args = build_parser().parse_args(
        ["demo", "--db", str(tmp_path / "x.db"), "--bots", "random, mcts-2000,random"]
    )
    options = DemoOptions.from_args(args)
    assert options.bots == ("random", "mcts-2000") and options.port == 8765
    assert options.db_url == f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"
    assert demo_dir(options.db_url) == tmp_path
    assert demo_dir("postgresql+asyncpg://u@h/db") == Path.cwd()
    for bad in (["--bots", "random,nobody"], ["--bots", "random"], ["--move-ms", "10"]):
        with pytest.raises(ValueError):
            DemoOptions.from_args(build_parser().parse_args(["demo", *bad]))
    argv = bot_argv("greedy", "greedy", "ws://127.0.0.1:1", "connect4", 300)
    assert argv[:3] == [sys.executable, "-m", "bots.client.cli"]
    from bots.client.cli import _parser as bot_parser

    parsed = bot_parser().parse_args(argv[3:])
    assert (parsed.name, parsed.strategy, parsed.move_ms) == ("greedy", "greedy", 300)
