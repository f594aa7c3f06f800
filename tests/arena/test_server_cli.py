"""The ``arena`` command: admin subcommands in-process, ``serve`` + SIGTERM as a process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from arena.cli.main import build_parser, main
from protocol.messages import PROTOCOL_VERSION


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bots_add_list_remove_and_leaderboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_DB", f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}")
    code, out, _ = run(capsys, "bots", "add", "alice")
    token = out.strip().splitlines()[-1]
    assert code == 0 and len(token) >= 32
    assert run(capsys, "bots", "add", "alice")[0] == 2
    code, out, _ = run(capsys, "bots", "list")
    assert code == 0 and "alice" in out and "yes" in out
    code, out, _ = run(
        capsys, "leaderboard", "--game", "connect4", "--server", "http://127.0.0.1:9"
    )
    assert code == 0 and "not reachable" in out and "rank" in out
    assert run(capsys, "ratings", "rebuild")[0] == 0
    assert run(capsys, "bots", "remove", "alice")[0] == 0
    assert run(capsys, "bots", "remove", "alice")[0] == 2
    other = f"sqlite+aiosqlite:///{tmp_path / 'other.db'}"
    code, out, _ = run(capsys, "bots", "list", "--db", other)
    assert "alice" not in out


def test_an_old_match_id_that_starts_with_a_dash_is_passed_after_double_dash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The way out the help text and README give for ids made before ids avoided "-".
    assert build_parser().parse_args(["watch", "--", "-Ab3x"]).match_id == "-Ab3x"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["watch", "-Ab3x"])
    assert "-Ab3x" in capsys.readouterr().err


async def test_serve_shuts_down_cleanly_on_sigterm(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}"
    env = {**os.environ, "ARENA_DB": db}
    add = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "arena",
        "bots",
        "add",
        "alice",
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    token = (await add.communicate())[0].decode().strip().splitlines()[-1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "arena",
        "serve",
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()  # type: ignore[union-attr]
        url = line.split()[-1]
        async with connect(url, compression=None) as ws:
            hello = {
                "type": "hello",
                "role": "bot",
                "version": PROTOCOL_VERSION,
                "name": "alice",
                "token": token,
            }
            await ws.send(json.dumps(hello))
            assert json.loads(await ws.recv())["type"] == "welcome"
            proc.send_signal(signal.SIGTERM)
            error = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert error["code"] == "server_shutdown"
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        assert await asyncio.wait_for(proc.wait(), 20) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
