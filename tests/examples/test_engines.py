"""UGI engines in the arena: the Python engine of ``docs/engines.md`` (extracted from the
document, so the document is enough to write one), the C++ example
``examples/cpp-engine`` (built with ``g++ -O2``; skipped where g++ is missing,
``./test.sh`` installs it) and a crashing engine, played through ``arena-bot`` on a
real server and through ``arena tournament run --local``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arena.cli.local_tournament import bot_name
from arena.server import ArenaConfig, ArenaServer
from protocol.messages import Event
from tests.bots.test_client_e2e import spectate, url_of

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "engines.md"
CPP = REPO / "examples" / "cpp-engine" / "c4_mcts.cpp"
SCRIPTED = REPO / "tests" / "bots" / "ugi_engine.py"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
GXX = shutil.which("g++")


def doc_engine(directory: Path) -> Path:
    """The engine of the section "A minimal engine in Python", saved as ``engine.py``."""
    section = DOC.read_text(encoding="utf-8").split("## A minimal engine in Python", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None, "docs/engines.md has no Python engine"
    path = directory / "engine.py"
    path.write_text(found.group(1), encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture(scope="module")
def cpp_engine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C++ example, compiled as its comment says."""
    if GXX is None:
        pytest.skip("g++ is not installed (./test.sh installs it)")
    binary = tmp_path_factory.mktemp("cpp") / "c4_mcts"
    subprocess.run(
        [GXX, "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(CPP)],
        check=True, timeout=180,
    )  # fmt: skip
    return binary


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ArenaServer]:
    """A real arena on a free port over a fresh SQLite file."""
    config = ArenaConfig(
        host="127.0.0.1", port=0, db_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}",
        move_ms=500, grace_s=10.0, ping_interval_s=1.0, close_timeout_s=2.0, seed=5,
    )  # fmt: skip
    async with ArenaServer(config) as running:
        yield running


async def play(
    server: ArenaServer, strategies: dict[str, str], games: int, tmp_path: Path
) -> dict[str, str]:
    """Run one ``arena-bot`` per bot until each played ``games`` matches; their stderr."""
    tokens = {name: await server.store.add_bot(name) for name in strategies}
    procs = {
        name: await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bots.client.cli", "--url", url_of(server), "--name", name,
            "--game", "connect4", "--strategy", spec, "--games", str(games), "--move-ms", "500",
            "--bank-ms", "1000",
            env={
                **ENV, "ARENA_BOT_TOKEN": tokens[name],
                "ARENA_ENGINE_LOG": str(tmp_path / f"engine-{name}.log"),
            },
            cwd=tmp_path,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        for name, spec in strategies.items()
    }
    try:
        async with asyncio.timeout(120):
            outputs = {name: await proc.communicate() for name, proc in procs.items()}
    finally:
        for proc in procs.values():
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    for name, proc in procs.items():
        assert proc.returncode == 0, outputs[name][1].decode()
    return {name: out[1].decode() for name, out in outputs.items()}


async def test_the_documented_and_the_cpp_engine_play_on_a_server(
    server: ArenaServer, tmp_path: Path, cpp_engine: Path
) -> None:
    doc_engine(tmp_path)
    events: list[Event] = []
    watcher = asyncio.create_task(spectate(url_of(server), events))
    await asyncio.sleep(0.2)  # watching before the first match starts
    try:
        # Relative paths, as a user types them: found from arena-bot's directory.
        await play(
            server,
            {"doc-engine": "ugi:./engine.py", "cpp-engine": f"ugi:{cpp_engine} --option Seed=3"},
            2,
            tmp_path,
        )
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    finished = await server.store.list_matches(status="finished", game="connect4")
    assert len(finished) == 2
    assert all(m.termination in ("line", "draw") for m in finished), finished
    # Spectators see each engine's info line as the move's analysis.
    analysed = [e.analysis for e in events if e.kind == "moved" and e.analysis is not None]
    cpp = [a for a in analysed if a.nodes and a.nodes > 2 * 7]
    doc = [a for a in analysed if a.nodes == 14 and a.depth == 1]
    assert cpp and doc
    assert all(a.pv and a.value is not None and a.depth for a in cpp)
    assert all(len(a.pv) == 1 for a in doc)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("crash", "engine ugi_engine.py was killed by SIGSEGV"),
        ("hang", "engine ugi_engine.py ran out of time: no bestmove"),
        ("garbage", "engine ugi_engine.py wrote garbage: unexpected line"),
        ("illegal", "engine ugi_engine.py played illegal move"),
    ],
)
async def test_a_faulty_engine_resigns_each_game_with_its_reason(
    server: ArenaServer, tmp_path: Path, mode: str, reason: str
) -> None:
    errors = await play(
        server,
        {"crashy": f"ugi:{sys.executable} {SCRIPTED} {mode} 2", "steady": "random:seed=3"},
        2,
        tmp_path,
    )
    finished = await server.store.list_matches(status="finished", game="connect4")
    assert len(finished) == 2
    for match in finished:
        # A hang, too, is the engine's resignation: not a loss on time, nor a fallback move.
        assert match.termination == "resign"
        assert match.players[1 - match.winner] == "crashy"  # type: ignore[operator]
        assert f"crashy resigned ({reason}" in match.reason
    assert errors["crashy"].count(f"resigning: {reason}") == 2
    assert "Traceback" not in errors["crashy"]
    # Each go told the engine both banks left.
    told = (tmp_path / "engine-crashy.log").read_text()
    assert re.search(r"^go movetime \d+ p1time \d+ p2time \d+$", told, re.MULTILINE), told
    assert "2 matches: 0 won, 0 drawn, 2 lost, 0 aborted; 2 resigned after an engine fault" in (
        errors["crashy"]
    )


def test_engines_play_a_local_tournament(tmp_path: Path, cpp_engine: Path) -> None:
    doc_engine(tmp_path)
    db = tmp_path / "local.db"
    done = subprocess.run(
        [
            sys.executable, "-m", "arena", "tournament", "run", "--db", str(db),
            "--game", "connect4", "--format", "round-robin", "--games-per-pair", "2",
            "--move-ms", "300", "--quiet",
            "--local", "ugi:./engine.py", f"ugi:{cpp_engine}", "random",
        ],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path, env=ENV,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    status = json.loads(
        subprocess.run(
            [sys.executable, "-m", "arena", "tournament", "status", "1", "--db", str(db), "--json"],
            capture_output=True, text=True, timeout=60, check=True, env=ENV,
        ).stdout
    )  # fmt: skip
    assert status["status"] == "finished"
    assert status["progress"]["done"] == 6
    bots = {row["bot"] for row in status["standings"]}
    assert bots == {"ugi-engine_py", "ugi-c4_mcts", "random"}
    # The engines' stderr goes next to the tournament's log (created even when empty).
    assert (tmp_path / "engine-ugi-engine_py.log").exists()
    assert (tmp_path / "engine-ugi-c4_mcts.log").exists()


def run(*args: str, stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """A console command of this checkout (``python -m MODULE ARGS``), its output kept."""
    return subprocess.run(
        [sys.executable, "-m", *args], input=stdin, capture_output=True, text=True,
        timeout=300, check=False, cwd=cwd, env=ENV,
    )  # fmt: skip


def test_arena_play_against_an_engine_shows_its_report_and_a_crash_resigns(
    tmp_path: Path,
) -> None:
    doc_engine(tmp_path)
    done = run("arena", "play", "connect4", "--vs", "ugi:./engine.py", stdin="3\n", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "search: 14 nodes" in done.stdout and "depth 1; expects " in done.stdout
    crash = f"ugi:{sys.executable} {SCRIPTED} crash 1"
    done = run("arena", "play", "connect4", "--vs", crash, "--second")
    assert done.returncode == 0, done.stderr
    assert "the bot resigned: engine ugi_engine.py was killed by SIGSEGV" in done.stdout
    assert done.stdout.rstrip().endswith("you win (0-1, resign)")
    assert "Traceback" not in done.stderr


def test_bots_play_records_an_engine_fault_in_the_game_line() -> None:
    done = run(
        "bots.cli", "play", "connect4", f"ugi:{sys.executable} {SCRIPTED} illegal 2", "random",
        "--games", "2", "--seed", "1", "--boards", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert len(lines) == 2
    assert all("(random, resign: engine ugi_engine.py played illegal move" in x for x in lines)
    assert "Traceback" not in done.stderr


def test_an_engine_takes_a_seat_on_the_ladder(tmp_path: Path) -> None:
    engine = f"ugi:{sys.executable} {SCRIPTED} good"
    done = subprocess.run(
        [
            sys.executable, "-m", "arena", "ladder", "--db", str(tmp_path / "ladder.db"),
            "--game", "tictactoe", "--sims", "20", "--anchors", "random", "--engine", engine,
            "--games-per-pair", "2", "--move-ms", "2000", "--quiet", "--out", str(tmp_path),
        ],
        capture_output=True, text=True, timeout=300, check=False,
        env={**ENV, "UGI_TEST_GAME": "tictactoe"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    table = (tmp_path / "ladder.md").read_text()
    # random, the engine, mcts at 20: three pairs of two games.
    assert f"| {bot_name(engine)} | - |" in table and "6 games" in table
    assert bot_name(engine).endswith("-ugi_engine_py-good")


def test_local_runs_refuse_a_missing_engine_before_starting(tmp_path: Path) -> None:
    done = run(
        "arena", "tournament", "run", "--db", str(tmp_path / "t.db"), "--game", "connect4",
        "--local", "ugi:./no-such-engine", "random", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--local 'ugi:./no-such-engine': ugi: no such engine program './no-such-engine'" in (
        done.stderr
    )
    assert not (tmp_path / "t.db").exists()


def test_an_engine_plays_under_its_program_name_and_arguments() -> None:
    assert bot_name("ugi:./engines/c4 --threads 1") == "ugi-c4-threads-1"
    assert bot_name("ugi:./c4_mcts --option Seed=3") == "ugi-c4_mcts-option-Seed3"


def test_arena_bot_refuses_an_engine_that_cannot_start_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bots.client.cli", "--name", "x", "--strategy", "ugi:/bin/false"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**ENV, "ARENA_BOT_TOKEN": "not-needed-before-the-engine-starts"},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "bad --strategy 'ugi:/bin/false': engine false exited with status 1" in done.stderr
