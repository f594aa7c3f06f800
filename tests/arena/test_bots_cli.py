"""``arena bots`` as a person meets it: real processes, one-line errors with exit status 2,
a token reset that a running ``arena serve`` acts on, and every option documented."""

from __future__ import annotations

import argparse
import asyncio
import re
from pathlib import Path

import pytest
from serve_process import Bot, ServeProcess, arena
from websockets.exceptions import ConnectionClosed

from arena.cli.main import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def refused(db: str, *args: str) -> str:
    """Run ``arena bots ARGS``; assert it fails with one line and status 2; that line."""
    done = arena("bots", *args, "--db", db)
    assert done.returncode == 2, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def token_of(db: str, *args: str) -> str:
    """Run ``arena bots ARGS``, which prints a token on its last line; the token."""
    done = arena("bots", *args, "--db", db)
    assert done.returncode == 0, done.stderr
    token = done.stdout.splitlines()[-1]
    assert re.fullmatch(r"[A-Za-z0-9_-]{40,}", token), done.stdout
    return token


def test_bots_commands_and_their_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    first = token_of(db, "add", "alice")
    assert refused(db, "add", "alice") == (
        "error: a bot named 'alice' already exists;"
        " 'arena bots token alice --reset' gives it a new token"
    )
    assert refused(db, "add", "a.b") == (
        "error: 'a.b' is not a valid bot name:"
        " use 1-32 letters, digits, '-' and '_', not starting with '-'"
    )
    assert "cannot be shown again" in refused(db, "token", "alice")
    second = token_of(db, "token", "alice", "--reset")
    assert second != first
    assert refused(db, "token", "nobody", "--reset") == "error: no active bot named 'nobody'"
    assert refused(db, "remove", "nobody") == "error: no active bot named 'nobody'"
    removed = arena("bots", "remove", "alice", "--db", db)
    assert removed.returncode == 0 and "'arena bots add alice' brings it back" in removed.stdout
    assert refused(db, "token", "alice", "--reset") == (
        "error: bot 'alice' was removed; 'arena bots add alice' brings it back with a new token"
    )
    done = arena("bots", "add", "alice", "--db", db)
    assert done.returncode == 0 and done.stdout.startswith("reactivated bot alice")
    listed = arena("bots", "list", "--db", db)
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[0].split() == ["bot", "registered", "(UTC)", "active"]
    assert listed.stdout.splitlines()[2].split()[::3] == ["alice", "yes"]


def test_several_names_each_get_an_answer(tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    done = arena("bots", "add", "good", "bad name", "also-good", "--db", db)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: 'bad name' is not a valid bot name:"
        " use 1-32 letters, digits, '-' and '_', not starting with '-'"
    ]
    assert [line.split()[:3] for line in done.stdout.splitlines()[::2]] == [
        ["added", "bot", "good;"],
        ["added", "bot", "also-good;"],
    ]


async def test_a_reset_token_disconnects_the_bot_from_a_running_server(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    token = token_of(db, "add", "alice")
    server = ServeProcess(db).start()
    try:
        bot = await Bot.login(server.url, "alice", token)
        new = await asyncio.to_thread(token_of, db, "token", "alice", "--reset")
        error = await bot.expect("error", timeout=10)
        assert error["code"] == "auth_failed" and "token was reset" in error["message"]
        with pytest.raises(ConnectionClosed) as closed:
            await bot.expect("never", timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        again = await Bot.login(server.url, "alice", new)
        await again.ws.close()
    finally:
        assert server.stop() == 0


def _bots_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    bots = commands.choices["bots"]
    sub = next(a for a in bots._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_bots_option_is_explained_in_help_and_in_the_docs() -> None:
    docs = DOCS.read_text(encoding="utf-8").splitlines()
    parsers = _bots_parsers()
    assert set(parsers) == {"add", "list", "register", "remove", "token"}
    for name, parser in parsers.items():
        lines = [line for line in docs if f"| `arena bots {name}" in line]
        assert lines, f"bots {name} has no line in the docs/bots.md table"
        for action in parser._actions:
            assert action.help, f"bots {name}: {action.dest} has no help"
            for option in action.option_strings:
                if option not in ("-h", "--help", "--db"):
                    assert any(option in line for line in lines), f"bots {name} {option}"
