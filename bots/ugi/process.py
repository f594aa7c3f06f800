"""One UGI engine process: start it under limits, talk to it line by line, stop it.

Blocking I/O on purpose: a strategy's ``_choose`` runs in a worker thread
(``Strategy.choose_move_async``) or in offline play, never on the event
loop. A reader thread turns the engine's stdout into a queue, so every wait
has a deadline and nothing can hang on a silent engine.

Every problem is an ``EngineFault`` with a one-line reason; the process is
killed (its whole process group) before the fault is raised, so the next
game starts a fresh one.

Limits per engine process (``setrlimit`` before the engine starts; the
environment variables change them, 0 means no limit):

* address space ``ARENA_ENGINE_MEMORY_MB``, default ``DEFAULT_MEMORY_MB``
  (2048 MiB; runtimes that reserve much virtual memory, like the JVM, may
  need more);
* CPU time ``ARENA_ENGINE_CPU_S``, default ``DEFAULT_CPU_S`` (3600 s over the
  process's life; an engine over it is killed by the kernel, loses that
  game and is restarted).

The engine's stderr is appended to the file ``ARENA_ENGINE_LOG`` names, when
it is set (``arena tournament run --local`` sets ``engine-BOT.log`` beside
its own log), otherwise it is the bot's own stderr.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, NoReturn

from bots.strategy import Forfeit
from bots.ugi.lines import (
    MAX_LINE,
    BadLine,
    BestMove,
    EngineLine,
    Id,
    Info,
    OptionLine,
    ReadyOk,
    UgiOk,
    parse_line,
    setoption_command,
)
from bots.ugi.spec import EngineSpec

DEFAULT_MEMORY_MB = 2048
"""The engine's address-space limit (``RLIMIT_AS``) unless ``ARENA_ENGINE_MEMORY_MB`` says."""

DEFAULT_CPU_S = 3600
"""The engine's CPU-time limit (``RLIMIT_CPU``) unless ``ARENA_ENGINE_CPU_S`` says."""

HANDSHAKE_S = 10.0
"""How long an engine may take to answer ``ugi`` (``ugiok``) and ``isready`` (``readyok``)."""

QUIT_S = 1.0
"""How long an engine gets to exit after ``quit`` before it is killed."""

MAX_PENDING_LINES = 10_000
"""Lines read ahead of the adapter; an engine flooding beyond them blocks on its pipe
(and hangs), rather than fill the bot's memory."""

PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal a process gets when its parent thread exits (linux/prctl.h)."""


class EngineFault(Forfeit):
    """The engine crashed, hung, wrote garbage or broke the protocol (``reason`` says which)."""


def _limit_from_env(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise EngineFault(f"{name} must be an integer, got {text!r}") from None
    return max(0, value)


def engine_limits() -> tuple[int, int]:
    """``(memory MiB, CPU seconds)`` for the next engine process (0: unlimited)."""
    return (
        _limit_from_env("ARENA_ENGINE_MEMORY_MB", DEFAULT_MEMORY_MB),
        _limit_from_env("ARENA_ENGINE_CPU_S", DEFAULT_CPU_S),
    )


def _apply_limits(memory_mb: int, cpu_s: int) -> Callable[[], None]:
    def apply() -> None:  # runs in the child between fork and exec
        if sys.platform == "linux":
            # A bot killed outright cannot quit its engine: the kernel kills it instead.
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if memory_mb:
            size = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
        if cpu_s:
            # The soft limit sends SIGXCPU; the hard one a second later, SIGKILL.
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))

    return apply


def describe_exit(returncode: int | None) -> str:
    """How the process ended, in words: ``exited with status 3``, ``killed by SIGSEGV``."""
    if returncode is None:
        return "stopped answering"
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    if -returncode == signal.SIGXCPU:
        return "was killed for exceeding its CPU-time limit (SIGXCPU)"
    return f"was killed by {name}"


class EngineProcess:
    """A started engine: ``send`` a command, ``read`` a line by a deadline, ``close``."""

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        self.id: dict[str, str] = {}
        self.options: list[str] = []
        memory_mb, cpu_s = engine_limits()
        log_file = os.environ.get("ARENA_ENGINE_LOG")
        self._stderr: IO[bytes] | None = None
        if log_file:
            try:
                # Kept open for the engine's life; ``kill`` closes it.
                self._stderr = Path(log_file).open("ab")  # noqa: SIM115
            except OSError as exc:
                why = exc.strerror
                raise EngineFault(f"cannot open the engine log {log_file}: {why}") from None
        try:
            self._proc = subprocess.Popen(
                spec.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,  # its own group: a kill takes the engine's children too
                preexec_fn=_apply_limits(memory_mb, cpu_s),
            )
        except OSError as exc:
            self._close_log()
            failed = exc.strerror or str(exc)
            raise EngineFault(f"engine {spec.name} could not start: {failed}") from None
        self._lines: queue.Queue[bytes | None] = queue.Queue(MAX_PENDING_LINES)
        self._reader = threading.Thread(
            target=self._read_stdout, name=f"ugi-{spec.name}-stdout", daemon=True
        )
        self._reader.start()

    @property
    def pid(self) -> int:
        """The engine's process id."""
        return self._proc.pid

    @property
    def alive(self) -> bool:
        """Whether the process has not exited."""
        return self._proc.poll() is None

    def _read_stdout(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        try:
            with contextlib.suppress(OSError, ValueError):
                # A line longer than MAX_LINE comes in pieces, the first refused as garbage.
                while line := stdout.readline(MAX_LINE + 1):
                    self._lines.put(line)
            self._lines.put(None)
        finally:
            # Closed here, not by ``kill``: a close waits for a read in progress, and a
            # daemon the engine left behind may hold the pipe open.
            stdout.close()

    def send(self, command: str) -> None:
        """Write one command line; a closed pipe is a fault (the engine died)."""
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(command.encode() + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self.fail(f"engine {self.spec.name} {self.exit_words()} (its input is closed)")

    def read(self, until: float) -> EngineLine | None:
        """The next parsed non-empty line, or None when ``until`` (``time.monotonic()``) passes.

        End of output and garbage are faults.
        """
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return None
            try:
                raw = self._lines.get(timeout=left)
            except queue.Empty:
                return None
            if raw is None:
                self.fail(f"engine {self.spec.name} {self.exit_words()}")
            try:
                parsed = parse_line(raw.decode("utf-8"))
            except UnicodeDecodeError:
                self.fail(f"engine {self.spec.name} wrote garbage: {raw[:60]!r}")
            except BadLine as exc:
                self.fail(f"engine {self.spec.name} wrote garbage: {exc}")
            if parsed is not None:
                return parsed

    def expect(self, wanted: type, what: str, timeout_s: float, stale: bool = False) -> None:
        """Read until a line of type ``wanted``; ``id`` and ``option`` lines are noted, ``info``
        lines skipped, and with ``stale`` a late ``bestmove`` (of a search already over) too."""
        until = time.monotonic() + timeout_s
        while True:
            line = self.read(until)
            if line is None:
                self.fail(f"engine {self.spec.name} did not answer {what} within {timeout_s:g} s")
            if isinstance(line, wanted):
                return
            if isinstance(line, Id):
                self.id[line.field] = line.value
            elif isinstance(line, OptionLine):
                self.options.append(line.text)
            elif isinstance(line, BestMove) and stale:
                continue
            elif not isinstance(line, (ReadyOk, UgiOk, Info)):
                self.fail(f"engine {self.spec.name} answered {what} with {type(line).__name__}")

    def handshake(self) -> None:
        """``ugi`` -> ``ugiok``, the spec's ``setoption``s, ``isready`` -> ``readyok``."""
        self.send("ugi")
        self.expect(UgiOk, "ugi", HANDSHAKE_S)
        for name, value in self.spec.options:
            self.send(setoption_command(name, value))
        self.sync()

    def sync(self, stale: bool = False) -> None:
        """``isready`` -> ``readyok``; ``stale``: skip a ``bestmove`` that comes late."""
        self.send("isready")
        self.expect(ReadyOk, "isready", HANDSHAKE_S, stale)

    def fail(self, reason: str) -> NoReturn:
        """Kill the engine and raise ``EngineFault(reason)``."""
        self.kill()
        raise EngineFault(reason)

    def exit_words(self) -> str:
        """How the engine ended, in words (``stopped answering`` while it runs)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(0.5)  # the pipe closes just before the exit status is known
        return describe_exit(self._proc.poll())

    def kill(self) -> None:
        """SIGKILL the engine's process group and reap it; idempotent."""
        if self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(5.0)
        self._close_pipes()

    def close(self) -> None:
        """``quit``, then a kill if the engine is still there ``QUIT_S`` later."""
        if self._proc.poll() is None:
            with contextlib.suppress(EngineFault):
                self.send("quit")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(QUIT_S)
        self.kill()

    def _close_pipes(self) -> None:
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        # Unread lines go, so a reader thread blocked on a full queue can end.
        with contextlib.suppress(queue.Empty):
            while True:
                self._lines.get_nowait()
        self._close_log()

    def _close_log(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
