"""``arena tournament run --local``: a whole tournament of built-in strategies in one command.

::

    arena tournament run --game connect4 --format round-robin \\
        --local "mcts:sims=200" "mcts:sims=2000" "alphabeta:time_ms=50" random --games-per-pair 20

Like ``cutechess-cli -engine ... -engine ...``: it starts an embedded arena
server on a free port (on ``--db``, default ``arena.db``), registers one bot
per strategy spec under a name made from the spec (``mcts:sims=200`` plays as
``mcts-sims200``; tokens in ``arena-tournament-tokens.json``, mode 0600, next
to the database), spawns each as an ``arena-bot --no-seek`` process in its own
process group (``arena.cli.demo.BotProcess``), creates the tournament and
shows a progress bar until it is over, then prints the final tables.

A spec ``ugi:CMD`` is an engine program speaking UGI (``bots.ugi``,
docs/engines.md); its stderr goes to ``engine-BOT.log`` beside the log.

Ctrl-C (or SIGTERM) pauses the tournament, stops the bots, then the server
(games in flight are aborted as the infrastructure's fault, so they are
replayed later, never counted); the same command with ``--resume`` continues
it. A bot process that exits stops the run the same way, naming the bot.
Logs go to ``arena-tournament.log`` next to the database.

A command-line front end, so it may use ``bots``' public API (the strategy
registry, to check each spec before anything starts); it never plays a move.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from arena.app import ArenaApp
from arena.cli.demo import (
    BotProcess,
    bot_argv,
    client_host,
    demo_dir,
    install_stop_signals,
    log_to_file,
    warm_search_kernels,
)
from arena.errors import DatabaseOpenError, TournamentError
from arena.provision import ensure_bot, read_token_map, write_token_map
from arena.server import ArenaConfig
from arena.store.opening import mask_url
from arena.tournaments import storage
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.report import format_status, progress_line
from arena.tournaments.scheduler import TournamentScheduler
from arena.tournaments.settings import TournamentSettings
from protocol.messages.values import BOT_NAME_PATTERN

log = logging.getLogger(__name__)

TOKENS_FILE = "arena-tournament-tokens.json"
LOG_FILE = "arena-tournament.log"
RATE_PER_S = 1000.0
"""Messages per second a local bot may send: instant bots move in microseconds."""
EXIT_STOPPED = 130


LOCAL_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,31}")
"""Names made from specs: letters, digits, ``-`` and ``_``, not starting with ``-``."""


def bot_name(spec: str) -> str:
    """The bot name a spec plays under: ``mcts:sims=200,workers=1`` -> ``mcts-sims200-workers1``.

    An engine is named after its program and arguments: ``ugi:./engines/c4 --threads 1``
    -> ``ugi-c4-threads-1``.

    Other characters become ``_`` (``c=1.4`` -> ``c1_4``); a name longer than 32
    characters is cut and made unique with a hash of the spec.
    """
    kind, _, options = spec.strip().partition(":")
    if kind.strip() == "ugi":
        # An engine plays under its program's file name and its arguments.
        words = [os.path.basename(word) for word in options.split()]
        parts = ["ugi"] + [word.lstrip("-").replace("=", "") for word in words]
    else:
        parts = [kind] + [item.replace("=", "") for item in options.split(",") if item.strip()]
    name = re.sub(r"[^A-Za-z0-9_-]", "_", "-".join(p.strip() for p in parts)).lstrip("-")
    if len(name) > 32:
        digest = hashlib.sha256(spec.encode()).hexdigest()[:6]
        name = f"{name[:25]}-{digest}"
    if not LOCAL_NAME.fullmatch(name) or not re.fullmatch(BOT_NAME_PATTERN, name):
        raise TournamentError(f"cannot make a bot name from {spec!r}")
    return name


def check_spec(spec: str, game: str) -> None:
    """Raise ``TournamentError`` when ``spec`` is no built-in strategy that can play ``game``.

    Only the registry and the option names and types are checked: building the
    strategy would start its worker processes.
    """
    from bots import ALIASES, StrategyError, parse_spec, strategy_class

    try:
        kind, options = parse_spec(spec)
        cls = strategy_class(kind)
        if kind == "ugi":  # the program must exist before any bot starts
            from bots.ugi import parse_engine_command

            parse_engine_command(options["command"])
            return
    except StrategyError as exc:
        raise TournamentError(f"--local {spec!r}: {exc}") from None
    for name, value in options.items():
        full = ALIASES.get(name, name)
        typ = cls.OPTIONS.get(full)
        if typ is None:
            valid = ", ".join(sorted(cls.OPTIONS)) or "none"
            raise TournamentError(f"--local {spec!r}: unknown option {name!r}; valid: {valid}")
        if typ in (int, float):
            try:
                typ(value)
            except ValueError:
                what = "an integer" if typ is int else "a number"
                raise TournamentError(f"--local {spec!r}: option {name!r} needs {what}") from None
    if kind == "mcts" and options.get("engine") == "kernel":
        from bots.kernels import KERNEL_GAMES

        if game not in KERNEL_GAMES:
            raise TournamentError(f"--local {spec!r}: no compiled kernel plays {game}")


@dataclass(frozen=True, slots=True)
class LocalOptions:
    """What ``run --local`` was asked to do (settings already checked)."""

    settings: TournamentSettings
    specs: tuple[str, ...]
    suite: OpeningSuite
    db_url: str
    resume: bool = False
    host: str = "127.0.0.1"
    port: int = 0
    max_matches: int = 1
    refresh_s: float = 0.5
    quiet: bool = False


def local_settings(settings: TournamentSettings, specs: tuple[str, ...]) -> TournamentSettings:
    """``settings`` with the bots named after ``specs`` (checked) and a name if none was given."""
    for spec in specs:
        check_spec(spec, settings.game)
    names = tuple(bot_name(spec) for spec in specs)
    name = settings.name or f"local {settings.format} {settings.game}: " + ",".join(names)
    return replace(settings, bots=names, name=name[:64]).check()


@dataclass(frozen=True, slots=True)
class LocalResult:
    """How a run ended: the exit status and the tournament's last status object."""

    exit_status: int
    status: dict[str, Any] | None


async def run_local(options: LocalOptions, out: TextIO | None = None) -> LocalResult:
    """Run (or resume) the tournament with its own server and bots; see the module docstring."""
    out = out or sys.stdout
    files = demo_dir(options.db_url)
    if not files.is_dir():
        # The database's own directory: a typo here must not create directories.
        raise DatabaseOpenError(mask_url(options.db_url), f"directory {files} does not exist")
    config = ArenaConfig(
        host=options.host,
        port=options.port,
        db_url=options.db_url,
        move_ms=options.settings.move_ms,
        rate_per_s=RATE_PER_S,
        rate_burst=int(2 * RATE_PER_S),
    )
    app = ArenaApp(config)
    await app.start()  # a database it cannot open is one line, before any file is written
    log_to_file(files / LOG_FILE)
    run = _LocalRun(app, options, out, files)
    stop = asyncio.Event()
    undo = install_stop_signals(stop)
    try:
        tokens = await run.register_bots()
        tournament_id = await run.tournament()
        await run.start_bots(tokens)
        return await run.follow(tournament_id, stop)
    finally:
        undo()
        await asyncio.gather(*(bot.stop() for bot in run.bots), return_exceptions=True)
        await app.stop("the local tournament run is over")


class _LocalRun:
    """One run's server, bots and files."""

    def __init__(self, app: ArenaApp, options: LocalOptions, out: TextIO, files: Path) -> None:
        self.app = app
        self.options = options
        self.out = out
        self.files = files
        self.bots: list[BotProcess] = []
        service = app.server.tournaments
        assert service is not None
        self.scheduler: TournamentScheduler = service.scheduler

    async def tournament(self) -> int:
        """The tournament to run: resumed (``--resume``) or created."""
        settings = self.options.settings
        unfinished = [
            row
            for row in await self.scheduler.summaries()
            if row["name"] == settings.name and row["status"] in (*storage.ACTIVE, "paused")
        ]
        if self.options.resume:
            if not unfinished:
                raise TournamentError(
                    f"nothing to resume: no unfinished tournament {settings.name!r}"
                )
            tournament_id = int(unfinished[0]["id"])
            if unfinished[0]["status"] == "paused":
                await self.scheduler.change(tournament_id, "resume")
            return tournament_id
        if unfinished:
            raise TournamentError(
                f"tournament {unfinished[0]['id']} ({settings.name!r}) is unfinished: continue it"
                f" with --resume, or `arena tournament cancel {unfinished[0]['id']}`"
            )
        return await self.scheduler.create(settings, self.options.suite)

    async def register_bots(self) -> dict[str, str]:
        """Register each bot (or reuse it with its remembered token); name -> token."""
        tokens_path = self.files / TOKENS_FILE
        known = read_token_map(tokens_path)
        tokens = dict(known)
        for name in self.options.settings.bots:
            tokens[name], _ = await ensure_bot(self.app.server.store, name, known.get(name))
        if tokens != known:
            write_token_map(tokens_path, tokens)
        return tokens

    async def start_bots(self, tokens: dict[str, str]) -> None:
        """Start each bot's ``arena-bot`` process."""
        options = self.options
        host = client_host(options.host)
        url = f"ws://{host}:{self.app.server.port}"
        settings = options.settings
        await warm_search_kernels(settings.game)
        with (self.files / LOG_FILE).open("ab") as output:
            for name, spec in zip(settings.bots, options.specs, strict=True):
                argv = [
                    *bot_argv(name, spec, url, settings.game, settings.move_ms),
                    "--bank-ms", str(settings.bank_ms),
                    "--max-matches", str(options.max_matches),
                    "--no-seek",
                    "--no-guests",
                    "--no-analysis",
                ]  # fmt: skip
                env = {
                    **os.environ,
                    "ARENA_BOT_TOKEN": tokens[name],
                    # UGI engines write their stderr next to the tournament's log.
                    "ARENA_ENGINE_LOG": str(self.files / f"engine-{name}.log"),
                }
                bot = BotProcess(name, spec, argv, env)
                await bot.start(output.fileno())
                self.bots.append(bot)

    async def follow(self, tournament_id: int, stop: asyncio.Event) -> LocalResult:
        """Show progress until the tournament ends, a bot exits or ``stop`` is set."""
        started = time.monotonic()
        status = await self.scheduler.status(tournament_id)
        done_before = status["progress"]["done"]
        self._say(
            f"tournament {tournament_id}: {status['name']}; {len(self.bots)} bots, "
            f"server on port {self.app.server.port}, log {self.files / LOG_FILE}"
        )
        screen = _ProgressScreen(self.out, self.options.quiet)
        while True:
            status = await self.scheduler.status(tournament_id)
            screen.show(progress_line(status, time.monotonic() - started, done_before))
            if status["status"] in ("finished", "cancelled"):
                screen.end()
                self._say(format_status(status))
                return LocalResult(0 if status["status"] == "finished" else 1, status)
            exited = [bot for bot in self.bots if bot.returncode is not None]
            if exited or stop.is_set():
                screen.end()
                await self.scheduler.change(tournament_id, "pause")
                status = await self.scheduler.status(tournament_id)
                for bot in exited:
                    self._say(
                        f"bot {bot.name} ({bot.spec}) exited with status {bot.returncode};"
                        f" see {self.files / LOG_FILE}"
                    )
                self._say(
                    f"paused tournament {tournament_id} at {status['progress']['done']}/"
                    f"{status['progress']['total']} games; the same command with --resume"
                    " continues it"
                )
                return LocalResult(1 if exited else EXIT_STOPPED, status)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.options.refresh_s):
                    await stop.wait()

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)


class _ProgressScreen:
    """The progress line: redrawn in place on a terminal, else printed when it changes."""

    def __init__(self, out: TextIO, quiet: bool) -> None:
        self._out = out
        self._quiet = quiet
        self._tty = out.isatty()
        self._last = ""
        self._last_at = 0.0

    def show(self, line: str) -> None:
        if self._quiet:
            return
        if self._tty:
            self._out.write("\r\x1b[K" + line)
            self._out.flush()
            return
        games = line.split(" games", 1)[0]
        if games != self._last and time.monotonic() - self._last_at >= 1.0:
            self._last, self._last_at = games, time.monotonic()
            print(line, file=self._out, flush=True)

    def end(self) -> None:
        if self._tty and not self._quiet:
            self._out.write("\n")
            self._out.flush()
