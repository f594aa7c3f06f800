"""``python -m bench.load``: per configuration (round-robin), bots, server, play, DB check."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import multiprocessing
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

import bench.load
from arena.store.models import Bot, Match, Move
from bench.load.bots import DRAIN_S, Server, client_main
from bench.load.report import Config, Run, legend, soak_report, table

ARENA = str(Path(sys.executable).with_name("arena"))  # the console script of this environment
SHOWN_LOG_LINES = 10  # of a run with errors: its server's first warnings and errors


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench; the exit status is 1 when a run's database check failed."""
    parser = argparse.ArgumentParser("python -m bench.load", description=bench.load.__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add, ints = parser.add_argument, lambda t: [int(x) for x in t.split(",")]
    floats, words = (lambda t: [float(x) for x in t.split(",")]), (lambda t: t.split(","))
    add("--matches", type=ints, help="concurrent matches (default 500; 200 with --soak)")
    add("--think-ms", type=floats, default=[0.0], help="mean think time per move (0)")
    add("--think-jitter", type=floats, default=[0.5], help="think time varies -+ this (0.5)")
    add("--db-writer", type=words, default=["process"], help="process, inline (process)")
    add("--nodes", type=ints, default=[1], help="arena nodes sharing --db, PostgreSQL (1)")
    add("--analysis", type=words, default=["none"], help="none, tree: a search report per move")
    add("--repeat", type=int, default=1, help="run every configuration N times, round-robin")
    add("--seconds", type=float, default=20.0, help="the measured window (20)")
    add("--warmup", type=float, default=3.0, help="play before the window opens (3)")
    add("--pairing-window", dest="pairing_window_s", type=float, default=0.5, help="(0.5)")
    add("--seed", type=int, default=1)
    add("--db", help="database URL (default: a fresh SQLite file per run)")
    add("--soak", type=float, metavar="MINUTES", help="one long run: server memory and pauses")
    add("--callgrind", action="store_true",
        help="count the server's instructions per move in the window (valgrind; ~50x slower:"
        " use a small load, e.g. --matches 20 --think-ms 20)")  # fmt: skip
    add(
        "--profile",
        metavar="FILE",
        help="run the server under cProfile and write its statistics to FILE (pstats)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1 or not all(0 <= j <= 1 for j in args.think_jitter):
        parser.error("--repeat takes a positive count, --think-jitter fractions from 0 to 1")
    if not set(args.analysis) <= {"none", "tree"}:
        parser.error("--analysis takes none, tree or both")
    if min(args.nodes) < 1 or (max(args.nodes) > 1 and "postgresql" not in (args.db or "")):
        parser.error("--nodes above 1 needs --db postgresql+asyncpg://...")
    if (args.callgrind or args.profile) and (max(args.nodes) > 1 or args.soak is not None):
        parser.error("--callgrind and --profile watch one node in a plain run (no --nodes, --soak)")
    if args.callgrind and args.profile:
        parser.error("--callgrind or --profile, not both")
    if args.callgrind and not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        parser.error("--callgrind needs valgrind and callgrind_control (apt-get install valgrind)")
    keys = ("seconds", "warmup", "pairing_window_s", "seed", "db", "callgrind", "profile")
    scalars = {k: getattr(args, k) for k in keys}
    if soak := args.soak is not None:
        scalars.update(seconds=60 * args.soak, soak_every=10_000)
    base = Config(**scalars)
    fields = ("nodes", "matches", "think_ms", "think_jitter", "db_writer", "analysis")
    lists = (args.nodes, args.matches or [200 if soak else 500], args.think_ms, args.think_jitter)
    runs = []
    # Round-robin, so the slow drift of a shared machine spreads over every configuration.
    for values in list(itertools.product(*lists, args.db_writer, args.analysis)) * args.repeat:
        config = replace(base, **dict(zip(fields, values, strict=True)))
        print("==", ", ".join(f"{k} {v}" for k, v in zip(fields, values, strict=True)), flush=True)
        runs.append(run := run_once(config))
        misses, errors = "; ".join(run.misses()) or "none", dict(run.errors) or "none"
        print(f"{table([run])}\nDB: {run.db_note}; errors: {errors}; target missed: {misses}")
        if config.soak_every:
            print(soak_report(run.soak))
    print(f"\n{table(runs)}\n{legend(runs)}")
    return 0 if all(run.db_ok for run in runs) else 1


def run_once(config: Config) -> Run:
    """Run the bench once at ``config``; the server stops before the database is checked."""
    with tempfile.TemporaryDirectory(prefix="arena-load-") as tmp:
        db, tokens = config.db or f"sqlite+aiosqlite:///{tmp}/arena.db", Path(tmp, "tokens")
        prefix = f"load{secrets.token_hex(3)}-"  # fresh names: a shared database can be reused
        names = [f"{prefix}{i}" for i in range(2 * config.matches)]
        add = [ARENA, "bots", "add", "--db", db, "--if-missing", "--token-dir", str(tokens)]
        subprocess.run([*add, *names], check=True, stdout=subprocess.DEVNULL)
        bots = [(name, (tokens / name).read_text().strip()) for name in names]
        serve = [ARENA, "serve", "--port", "0", "--db", db, "--db-writer", config.db_writer,
                 "--pairing-window", str(config.pairing_window_s), "--max-connections-per-address",
                 str(4 * config.matches), *["--allow-multi-node"][: config.nodes > 1]]  # fmt: skip
        counts = Path(tmp, "callgrind.out")
        if config.profile:  # cProfile's figures, written when the server exits
            serve = [sys.executable, "-m", "cProfile", "-o", config.profile, *serve]
        if config.callgrind:  # counting starts off: the client turns it on for the window only
            serve = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "-q",
                     f"--callgrind-out-file={counts}", *serve]  # fmt: skip
        procs: list[subprocess.Popen[bytes]] = []
        with contextlib.ExitStack() as stack:
            servers = []
            for k in range(config.nodes):
                log = stack.enter_context(Path(tmp, f"server{k}.log").open("wb+"))
                procs.append(server := subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=log))
                stack.enter_context(server)  # at the end SIGTERM (it commits, then exits), wait
                stack.callback(server.terminate)
                assert server.stdout is not None  # its first line: listening on ws://HOST:PORT
                if not (found := re.search(rb"on ws://(\S+?)/?$", server.stdout.readline())):
                    log.seek(0)
                    raise RuntimeError(f"arena serve did not start: {log.read()[-2000:].decode()}")
                servers.append(Server(found.group(1).decode(), server.pid))
            # The bots play from a process of their own (one that dies: the wait times out).
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                played = pool.apply_async(client_main, (config, servers, bots))
                run: Run = played.get(120 + config.warmup + config.seconds + DRAIN_S)
        run.db_ok, run.db_note = asyncio.run(check_db(db, prefix, run))
        if config.callgrind:
            run.instructions = callgrind_total(counts)
        if codes := [server.returncode for server in procs if server.returncode != 0]:
            run.db_ok, run.db_note = False, f"server exit code {codes}; {run.db_note}"
        if run.errors or not run.db_ok:  # the logs go with the temporary directory: say why now
            logs = (Path(tmp, f"server{k}.log") for k in range(config.nodes))
            lines = [line for log in logs for line in log.read_text(errors="replace").splitlines()]
            problems = [line for line in lines if " WARNING " in line or " ERROR " in line]
            if problems:
                shown = problems[:SHOWN_LOG_LINES]
                print(f"  server warnings and errors: {len(problems)}, the first {len(shown)}:")
                print("\n".join(f"    {line}" for line in shown), flush=True)
        return run


def callgrind_total(path: Path) -> int:
    """The instructions a callgrind output file counts (its ``totals:`` line; 0 without one)."""
    if not path.exists():
        return 0
    found = re.search(r"^totals: (\d+)", path.read_text(errors="replace"), re.M)
    return int(found.group(1)) if found else 0


async def check_db(db: str, prefix: str, run: Run) -> tuple[bool, str]:
    """Every move the bots saw confirmed is stored once (moves are keyed by match and ply), in
    the matches they saw end, and no other match of the run's bots is stored."""
    ours = sa.select(Bot.id).where(Bot.name.like(f"{prefix}%"))
    query = sa.select(Match.id, sa.func.count(Move.ply)).where(Match.player0_id.in_(ours))
    query = query.outerjoin(Move, Move.match_id == Match.id).group_by(Match.id)
    engine = create_async_engine(db)
    async with engine.connect() as conn:
        stored: dict[str, int] = {m: n for m, n in await conn.execute(query)}
    await engine.dispose()
    total, seen = sum(stored.values()), run.match_moves
    note = f"{total} moves stored / {run.moves} confirmed in {len(stored)} matches"
    if stored != seen:
        note += f"; {sum(stored.get(m) != seen.get(m) for m in stored.keys() | seen)} differ"
    return stored == seen and total == run.moves, note


if __name__ == "__main__":
    sys.exit(main())
