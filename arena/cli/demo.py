"""``arena demo``: the server plus the built-in bots, playing rated matches, with a live board.

One command shows the whole system on one machine::

    arena demo                                   # connect4, every built-in bot, port 8765
    arena demo --game tictactoe --bots random,greedy,mcts-200 --duration 60

It starts the server in this process (SQLite ``arena.db`` in the current
directory unless ``--db``; MQTT with ``--mqtt``; the web viewer at ``/``),
makes sure each demo bot is registered — tokens are kept in
``arena-demo-tokens.json`` (mode 0600) next to the database, so a second run
reuses the same bots and their ratings — and launches every bot as its own
``python -m bots.client.cli`` process. Before that it loads the bots' search
kernels once (compiling them on a machine's first run, with a line saying so),
so the bot processes find them in the cache; that is the one place the demo
imports ``bots``, as a launcher of bot processes may. The bots seek matches
again and again; a leaderboard is redrawn in the terminal
(or printed as lines when stdout is not a terminal). Bot and server logs go
to ``arena-demo.log`` next to the database.

Stopping (Ctrl-C, SIGTERM, SIGHUP or ``--duration``): the bots are stopped
first (SIGTERM to each bot's process group, SIGKILL after a timeout, so their
search workers go too), then the server aborts whatever was still live as the
infrastructure's fault (unrated). Finished matches and ratings were committed
as they happened, so nothing is lost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import make_url

from arena import runtime
from arena.app import ArenaApp
from arena.cli.common import PORT, Subparsers, whole_number
from arena.cli.tables import grouped_tables, rating_cell
from arena.errors import DatabaseOpenError
from arena.provision import ensure_bot, read_token_map, write_token_map
from arena.server import ArenaConfig
from arena.store.opening import mask_url
from protocol.games import GAMES

log = logging.getLogger(__name__)


def _alphabeta(move_ms: int) -> str:
    # Well inside the move time: the client does not cut a search short to fit the clock.
    return f"alphabeta:time_ms={max(5, min(100, move_ms // 10))}"


DEMO_BOTS: dict[str, Callable[[int], str]] = {
    "random": lambda _ms: "random",
    "greedy": lambda _ms: "greedy",
    "alphabeta": _alphabeta,
    "mcts-200": lambda _ms: "mcts:sims=200,workers=1",
    "mcts-2000": lambda _ms: "mcts:sims=2000,workers=1",
    "mcts-heavy": lambda _ms: "mcts-heavy:sims=500,workers=1",
}
"""The built-in bots: name -> strategy spec for a per-move time (one worker each: 2 cores do)."""

BOT_NAMES: tuple[str, ...] = tuple(DEMO_BOTS)
DEFAULT_BOTS: tuple[str, ...] = BOT_NAMES

TOKENS_FILE = "arena-demo-tokens.json"
LOG_FILE = "arena-demo.log"
BOT_STOP_TIMEOUT_S = 10.0
MIN_MOVE_MS = 50  # the server's smallest accepted per-move time
DEMO_RATE_PER_S = 1000.0
DEMO_PACE_MS = 300
"""The demo's pause between moves: a Connect Four game then lasts ~10 s, long enough to watch."""
"""Messages per second a demo bot may send (the server's default is 20)."""


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """What ``arena demo`` was asked to do (validated)."""

    db_url: str
    game: str = "connect4"
    bots: tuple[str, ...] = DEFAULT_BOTS
    host: str = "127.0.0.1"
    port: int = 8765
    mqtt_url: str | None = None
    move_ms: int = 1000
    pace_ms: int = DEMO_PACE_MS
    duration_s: float | None = None
    refresh_s: float = 2.0
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> DemoOptions:
        """Options from the parsed command line; raises ``ValueError`` for bad ones."""
        bots = tuple(dict.fromkeys(b.strip() for b in args.bots.split(",") if b.strip()))
        unknown = [b for b in bots if b not in DEMO_BOTS]
        if unknown:
            raise ValueError(f"unknown demo bot(s) {', '.join(unknown)}; choose from {BOT_NAMES}")
        if len(bots) < 2:
            raise ValueError("--bots needs at least two bots to make a match")
        if args.move_ms < MIN_MOVE_MS:
            raise ValueError(f"--move-ms must be at least {MIN_MOVE_MS}")
        if args.pace_ms < 0:
            raise ValueError("--pace-ms must not be negative")
        if args.duration is not None and args.duration <= 0:
            raise ValueError("--duration must be positive")
        if args.refresh <= 0:
            raise ValueError("--refresh must be positive")
        return cls(
            db_url=args.db,
            game=args.game,
            bots=bots,
            host=args.host,
            port=args.port,
            mqtt_url=args.mqtt,
            move_ms=args.move_ms,
            pace_ms=args.pace_ms,
            duration_s=args.duration,
            refresh_s=args.refresh,
            quiet=args.quiet,
        )


def demo_dir(db_url: str) -> Path:
    """Where the token and log files go: beside a SQLite file, else the current directory."""
    with contextlib.suppress(Exception):
        url = make_url(db_url)
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            return Path(str(url.database)).expanduser().resolve().parent
    return Path.cwd()


async def warm_search_kernels(game: str) -> None:
    """Compile (first run only, with a line on stderr) or load the bots' search kernels once,
    so the bot processes started next load them from the cache instead of each compiling."""
    from bots.kernels import warm_up
    from bots.strategies import compile_notice

    def warm() -> None:
        with compile_notice():
            warm_up(game, heavy=False)
            warm_up(game, heavy=True)

    await asyncio.to_thread(warm)


class BotProcess:
    """One demo bot running ``python -m bots.client.cli`` in its own process group."""

    def __init__(self, name: str, spec: str, argv: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.spec = spec
        self._argv = argv
        self._env = env
        self._proc: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int:
        """The bot's process id (also its process group id)."""
        assert self._proc is not None
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """None while running."""
        return None if self._proc is None else self._proc.returncode

    async def start(self, output: int) -> None:
        """Start the process, its stdout and stderr appended to file descriptor ``output``."""
        # A new session: the terminal's Ctrl-C reaches only the demo, which stops the bots
        # in order, and the whole group (the bot's search workers too) can be signalled.
        self._proc = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            env=self._env,
            start_new_session=True,
            preexec_fn=_terminate_with_parent,
        )

    async def stop(self, timeout: float = BOT_STOP_TIMEOUT_S) -> int | None:
        """SIGTERM the bot (it closes socket and workers); SIGKILL its group after ``timeout``."""
        if self._proc is None:
            return None
        if self._proc.returncode is None:
            # The bot alone: it closes its socket, then stops its own search workers.
            with contextlib.suppress(ProcessLookupError):
                self._proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self._proc.wait(), timeout)
            except TimeoutError:
                log.warning("bot %s did not stop in %.0f s; killing it", self.name, timeout)
        # Whatever is left of the group (a worker that outlived its parent) goes now.
        self._signal_group(signal.SIGKILL)
        return await self._proc.wait()

    def _signal_group(self, sig: signal.Signals) -> None:
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)


def _terminate_with_parent() -> None:
    """In the child before it runs: SIGKILL when the launcher dies (Linux's PR_SET_PDEATHSIG).

    A launcher killed outright (SIGKILL) cannot stop its bots, and a bot without
    its server would retry connecting forever. SIGKILL, not SIGTERM or SIGHUP: the
    server died with the launcher, so there is no match left to finish or resign,
    and a bot that tried would linger for seconds. Its search workers end as soon
    as they find their pipe to the bot closed.
    """
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal a process gets when its parent thread exits (linux/prctl.h)."""


def bot_argv(name: str, spec: str, url: str, game: str, move_ms: int) -> list[str]:
    """The command line of one demo bot (the token goes in the environment, not here)."""
    return [
        sys.executable,
        "-m",
        "bots.client.cli",
        "--url",
        url,
        "--name",
        name,
        "--game",
        game,
        "--strategy",
        spec,
        "--move-ms",
        str(move_ms),
        "--retry-max",
        "2",
    ]


# The terminal board -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BoardView:
    """What one redraw shows."""

    game: str
    viewer_url: str
    elapsed_s: float
    rated_total: int
    rated_this_run: int
    live: int
    entries: list[dict[str, Any]]
    exited: dict[str, int]
    log_path: Path


def format_board(view: BoardView) -> str:
    """The leaderboard as a text table with a header (used by both screen modes)."""

    entries = view.entries

    def row(e: dict[str, Any]) -> list[str]:
        return [
            str(e["rank"]),
            str(e["bot"]),
            rating_cell(e["rating"], e.get("ci95"), e.get("provisional")),
            str(e["games"]),
            f"{e['wins']}/{e['draws']}/{e['losses']}",
            "yes" if e["online"] else "no",
        ]

    lines = [
        f"MCTS Arena demo: {view.game}   viewer {view.viewer_url}   Ctrl-C to stop",
        f"{view.elapsed_s:6.0f} s   rated matches: {view.rated_this_run} this run, "
        f"{view.rated_total} in total   live: {view.live}",
        "",
        grouped_tables(["rank", "bot", "rating ± 95%", "games", "W/D/L", "online"], entries, row)
        if entries
        else "(no rated match finished yet)",
    ]
    for name, code in sorted(view.exited.items()):
        lines.append(f"bot {name} exited with status {code} (see {view.log_path})")
    return "\n".join(lines)


def format_line(view: BoardView) -> str:
    """One line for a non-terminal stdout: counts and every bot's rating."""
    ratings = ", ".join(f"{e['bot']} {e['rating']:.0f} ({e['games']})" for e in view.entries)
    return (
        f"[{view.elapsed_s:6.1f} s] rated {view.rated_this_run} this run "
        f"({view.rated_total} total), live {view.live}: {ratings or '-'}"
    )


class Screen:
    """Redraws the board on a terminal (plain ANSI), or prints a line when something changed."""

    CLEAR = "\x1b[H\x1b[2J"

    def __init__(self, out: TextIO, quiet: bool) -> None:
        self._out = out
        self._quiet = quiet
        self._tty = out.isatty()
        self._last = ""

    def show(self, view: BoardView) -> None:
        """Draw ``view`` (nothing when quiet)."""
        if self._quiet:
            return
        if self._tty:
            self._out.write(self.CLEAR + format_board(view) + "\n")
        else:
            line = format_line(view)
            changed = line.split("]", 1)[1]  # ignore the clock: print only news
            if changed == self._last:
                return
            self._last = changed
            self._out.write(line + "\n")
        self._out.flush()


# The demo itself ----------------------------------------------------------------------


def _rated_matches(entries: list[dict[str, Any]]) -> int:
    # Each rated match adds a game to both players' rows.
    return sum(int(e["games"]) for e in entries) // 2


def log_to_file(path: Path) -> None:
    """Send the arena's log (INFO and up) to ``path`` as well."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s arena %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.getLogger("websockets").setLevel(logging.WARNING)


async def run_demo(options: DemoOptions, out: TextIO | None = None) -> int:
    """Run the demo until a signal or ``duration_s``; returns the exit status."""
    files = demo_dir(options.db_url)
    if not files.is_dir():
        # The database's own directory: a typo here must not create directories.
        raise DatabaseOpenError(mask_url(options.db_url), f"directory {files} does not exist")
    log_to_file(files / LOG_FILE)
    config = ArenaConfig(
        host=options.host,
        port=options.port,
        db_url=options.db_url,
        move_ms=options.move_ms,
        pace_ms=options.pace_ms,
        # The demo's own bots move in milliseconds: at the default 20 messages/s a fast
        # pair outruns the limit, and a dropped move or seek would distort the ratings.
        rate_per_s=DEMO_RATE_PER_S,
        rate_burst=int(2 * DEMO_RATE_PER_S),
    )
    try:
        app = ArenaApp(config, mqtt_url=options.mqtt_url)
    except ValueError as exc:
        print(f"error: --mqtt: {exc}", file=sys.stderr)
        return 2
    try:
        await app.start()
    except OSError as exc:
        print(f"error: cannot listen on {options.host}:{options.port}: {exc}", file=sys.stderr)
        print("hint: another arena may be running; try --port 0 (any free port)", file=sys.stderr)
        return 1
    run = _DemoRun(app, options, out or sys.stdout, files)
    undo = install_stop_signals(run.stop)
    final: list[dict[str, Any]] = []
    try:
        await run.start_bots()
        run.print_banner()
        await run.dashboard()
    finally:
        # Bots first, so none is in the middle of a move when the server aborts its match.
        await asyncio.gather(*(bot.stop() for bot in run.bots), return_exceptions=True)
        with contextlib.suppress(Exception):
            final = await app.server.api.leaderboard_json(options.game)
        await app.stop("demo stopping")
        undo()
    print(run.closing(final), file=run.out, flush=True)
    return 0


def install_stop_signals(stop: asyncio.Event) -> Callable[[], None]:
    """Set ``stop`` on SIGINT, SIGTERM and SIGHUP; returns the function that undoes it."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)

    def undo() -> None:
        for sig in signals:
            loop.remove_signal_handler(sig)

    return undo


def client_host(host: str) -> str:
    """Where a local client connects when the server listens on ``host``."""
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host


class _DemoRun:
    """One run's state: the app, the bot processes, the files, and the counts at the start."""

    def __init__(self, app: ArenaApp, options: DemoOptions, out: TextIO, files: Path) -> None:
        self.app = app
        self.options = options
        self.out = out
        self.log_path = files / LOG_FILE
        self.tokens_path = files / TOKENS_FILE
        self.bots: list[BotProcess] = []
        self.stop = asyncio.Event()
        self.started = time.monotonic()
        self.started_total = 0
        host = client_host(options.host)
        self.viewer_url = f"http://{host}:{app.server.port}/"
        self.ws_url = f"ws://{host}:{app.server.port}"

    async def start_bots(self) -> None:
        """Register (or reuse) each bot, save the tokens, start one process per bot."""
        options, store = self.options, self.app.server.store
        await warm_search_kernels(options.game)
        self.started_total = _rated_matches(
            await self.app.server.api.leaderboard_json(options.game)
        )
        known = read_token_map(self.tokens_path)
        tokens = dict(known)
        for name in options.bots:
            tokens[name], action = await ensure_bot(store, name, known.get(name))
            if action != "kept":
                log.info("demo bot %s: %s", name, action)
        if tokens != known:
            write_token_map(self.tokens_path, tokens)
        with self.log_path.open("ab") as output:  # each child gets its own copy of the fd
            for name in options.bots:
                spec = DEMO_BOTS[name](options.move_ms)
                argv = bot_argv(name, spec, self.ws_url, options.game, options.move_ms)
                bot = BotProcess(name, spec, argv, {**os.environ, "ARENA_BOT_TOKEN": tokens[name]})
                await bot.start(output.fileno())
                self.bots.append(bot)
        # The duration is play time: a first run's kernel compile does not eat into it.
        self.started = time.monotonic()

    def print_banner(self) -> None:
        """Where everything is: URLs, files, and each bot's pid and strategy."""
        options = self.options
        lines = [
            f"arena demo: {options.game}, {len(self.bots)} bots, {options.move_ms} ms per move",
            f"viewer:    {self.viewer_url}",
            f"websocket: {self.ws_url}",
            f"database:  {options.db_url}",
            f"tokens:    {self.tokens_path}",
            f"log:       {self.log_path}",
        ]
        if options.mqtt_url:
            lines.append(f"mqtt:      {options.mqtt_url}")
        lines += [f"bot {bot.name:<12} pid {bot.pid:<7} {bot.spec}" for bot in self.bots]
        lines.append(
            "Ctrl-C stops the demo."
            if options.duration_s is None
            else f"stopping by itself after {options.duration_s:g} s (or Ctrl-C)."
        )
        print("\n".join(lines), file=self.out, flush=True)

    async def dashboard(self) -> None:
        """Redraw the board every ``refresh_s`` until ``stop`` is set or the duration is over."""
        options = self.options
        screen = Screen(self.out, options.quiet)
        deadline = None if options.duration_s is None else self.started + options.duration_s
        while True:
            screen.show(await self._view())
            wait = options.refresh_s
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self.stop.wait()
            if self.stop.is_set() or (deadline is not None and time.monotonic() >= deadline):
                return

    async def _view(self) -> BoardView:
        entries = await self.app.server.api.leaderboard_json(self.options.game)
        total = _rated_matches(entries)
        return BoardView(
            game=self.options.game,
            viewer_url=self.viewer_url,
            elapsed_s=time.monotonic() - self.started,
            rated_total=total,
            rated_this_run=total - self.started_total,
            live=len(self.app.server.registry),
            entries=entries,
            exited={b.name: code for b in self.bots if (code := b.returncode) is not None},
            log_path=self.log_path,
        )

    def closing(self, entries: list[dict[str, Any]]) -> str:
        """The final words: how long, how many matches, where they are kept, the table."""

        total = _rated_matches(entries)
        def row(e: dict[str, Any]) -> list[str]:
            return [
                str(e["rank"]),
                str(e["bot"]),
                rating_cell(e["rating"], e.get("ci95"), e.get("provisional")),
                str(e["games"]),
            ]

        header = ["rank", "bot", "rating ± 95%", "games"]
        table = grouped_tables(header, entries, row) if entries else ""
        return (
            f"demo stopped after {time.monotonic() - self.started:.1f} s: "
            f"{total - self.started_total} rated matches this run, {total} in total; "
            f"results and ratings are saved in {self.options.db_url}\n{table}"
        ).rstrip()


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena demo``."""
    demo = commands.add_parser(
        "demo",
        parents=[common],
        help="run the server with built-in bots playing rated matches; live leaderboard",
    )
    demo.add_argument("--game", default="connect4", choices=GAMES)
    demo.add_argument(
        "--bots",
        default=",".join(DEFAULT_BOTS),
        help=f"comma-separated subset of {','.join(BOT_NAMES)} (default: all)",
    )
    demo.add_argument("--host", default="127.0.0.1")
    demo.add_argument("--port", type=PORT, default=8765, help="0 picks a free port")
    demo.add_argument("--mqtt", metavar="URL", help="publish live events to this MQTT broker")
    demo.add_argument("--move-ms", type=whole_number(), default=1000, help="time per move (ms)")
    demo.add_argument(
        "--pace-ms",
        type=whole_number(),
        default=DEMO_PACE_MS,
        help=f"pause between moves, so people can follow (default {DEMO_PACE_MS}; 0: none)",
    )
    demo.add_argument(
        "--duration",
        type=float,
        metavar="SECONDS",
        help="stop by itself this long after the bots started",
    )
    demo.add_argument(
        "--refresh", type=float, default=2.0, metavar="SECONDS", help="leaderboard redraw period"
    )
    demo.add_argument("--quiet", action="store_true", help="no live leaderboard, just a summary")
    demo.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    try:
        options = DemoOptions.from_args(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return runtime.run(run_demo(options))
