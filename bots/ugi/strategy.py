"""``ugi``: a strategy played by an external engine program over UGI (stdin/stdout).

    with make_strategy_from_spec("ugi:./c4-engine --option Threads=1", "connect4") as bot:
        move = bot.choose_move(state, Budget.seconds(0.2))

Per move the engine is told the game from its start and the time it has::

    uginewgame + isready/readyok     (when this position does not continue the last one)
    position startpos moves 3 3 4
    go movetime MS [p1time BANK | p2time BANK]
    ... info ... lines, then bestmove MOVE

``MS`` is the time to the budget's deadline less ``ENGINE_MARGIN_MS`` (the
pipe and process wake-ups; the budget's own margin already covers the
network and the server). At the deadline the adapter sends ``stop``; an
engine that still has no ``bestmove`` by the budget's last moment to send
(``expires`` less ``HANG_MARGIN_S``; without a clock ``STOP_WAIT_S`` after
the deadline) has hung. After a ``stop`` the next search begins with
``isready``/``readyok``, so a late ``bestmove`` is never taken for the next one.
A hang, a crash, garbage, an illegal move or a broken limit raises
``EngineFault`` (a ``Forfeit``): the player loses that game with the reason,
the engine is killed and the next move starts a fresh one.
"""

from __future__ import annotations

import threading
import time
from typing import ClassVar

from bots.budget import Budget
from bots.strategy import SearchError, SearchInfo, Strategy
from bots.ugi.lines import BestMove, Info, go_command, position_command
from bots.ugi.process import EngineFault, EngineProcess
from bots.ugi.spec import DEFAULT_MOVETIME_MS, EngineSpec, parse_engine_command
from protocol.games import GameState, new_game

ENGINE_MARGIN_MS = 10.0
"""Kept back from the time to the deadline for the pipes and the engine's wake-up."""

STOP_WAIT_S = 2.0
"""Without a clock: how long after ``stop`` an engine may take to send its ``bestmove``."""

HANG_MARGIN_S = 0.05
"""Under a clock, an engine has hung this long before the move's last moment (or halfway
from its ``stop`` there, when less is left: ``hung_at``), so the forfeit reaches the
client before it sends a fallback move instead, even on a busy machine."""


def hung_at(stopped: float, expires: float) -> float:
    """When an engine sent ``stop`` at ``stopped`` has hung, if ``expires`` is the last
    moment to send the move: ``HANG_MARGIN_S`` before it, or halfway there when the time
    between is shorter than twice that (never before ``stopped``)."""
    margin = min(HANG_MARGIN_S, max(0.0, expires - stopped) / 2)
    return max(stopped, expires - margin)


class UGIStrategy(Strategy):
    """An engine program speaking UGI; ``command`` is the spec after ``ugi:``.

    The engine starts (and shakes hands) when the strategy is built, so a
    broken engine is reported at once; it is restarted after any fault.
    """

    kind: ClassVar[str] = "ugi"
    OPTIONS: ClassVar[dict[str, type]] = {"command": str}

    def __init__(self, game: str, command: str) -> None:
        super().__init__(game)
        self.spec: EngineSpec = parse_engine_command(command)
        self.time_ms = None if self.spec.movetime_ms is None else float(self.spec.movetime_ms)
        self.restarts = 0
        """How many times the engine was started again after a fault."""
        self._engine: EngineProcess | None = None
        self._last_moves: tuple[int, ...] | None = None
        self._stopped = False
        """The last search was stopped: a second ``bestmove`` may still come."""
        # The client may give up waiting on a search (its thread runs on): one at a time.
        self._lock = threading.Lock()
        try:
            self._start()
        except EngineFault as exc:
            raise SearchError(str(exc)) from None

    @property
    def pid(self) -> int | None:
        """The running engine's process id (None when none runs)."""
        engine = self._engine
        return engine.pid if engine is not None and engine.alive else None

    def describe(self) -> str:
        """``ugi:`` and the engine's command line."""
        return self.spec.describe()

    def close(self) -> None:
        """``quit`` the engine (killed if it lingers); idempotent."""
        super().close()
        with self._lock:
            if self._engine is not None:
                self._engine.close()
                self._engine = None

    def _start(self) -> EngineProcess:
        engine = EngineProcess(self.spec)
        self._engine = engine
        self._last_moves = None
        self._stopped = False
        engine.handshake()
        return engine

    def _choose(self, state: GameState, budget: Budget) -> int:
        with self._lock:
            if self._closed:
                raise SearchError("ugi: the strategy is closed")
            try:
                return self._search(state, budget)
            except EngineFault:
                self._engine = None  # killed by the fault; the next move starts a fresh one
                self._last_moves = None
                raise

    def _search(self, state: GameState, budget: Budget) -> int:
        moves = state.moves
        if new_game(self.game).play_all(moves).encode() != state.encode():
            # A position decoded mid-game has no history to give as ``startpos moves``.
            raise SearchError("ugi: the position does not follow from the start by its moves")
        last = self._last_moves
        # This bot's moves in one game are two plies apart; anything else is another game.
        same_game = last is not None and len(moves) == len(last) + 2 and moves[: len(last)] == last
        engine = self._engine
        if engine is None or not engine.alive:
            if engine is not None and same_game:  # it died after its last move in this game
                engine.fail(f"engine {self.spec.name} {engine.exit_words()} between two moves")
            if engine is not None:
                engine.kill()
            self.restarts += 1
            engine = self._start()
            same_game = False
        if not same_game:
            engine.send("uginewgame")
            engine.sync(stale=self._stopped)
        elif self._stopped:
            engine.sync(stale=True)  # whatever the stop left behind comes before readyok
        self._last_moves = moves
        self._stopped = False
        started = time.monotonic()
        movetime, soft, hard = self._timing(budget, started)
        engine.send(position_command(moves))
        mover = state.to_move
        engine.send(go_command(movetime, mover, budget.bank_ms, budget.opponent_bank_ms))
        last_info: Info | None = None
        stopped = False
        while True:
            line = engine.read(hard if stopped else soft)
            if line is None:
                if stopped:
                    engine.fail(
                        f"engine {self.spec.name} ran out of time: no bestmove "
                        f"{(time.monotonic() - started) * 1000:.0f} ms after go movetime {movetime}"
                    )
                engine.send("stop")
                stopped = self._stopped = True
                continue
            if isinstance(line, Info):
                if line.string is None or line.depth is not None or line.nodes is not None:
                    last_info = _merge(last_info, line)
                continue
            if isinstance(line, BestMove):
                if not state.is_legal(line.move):
                    engine.fail(
                        f"engine {self.spec.name} played illegal move {line.move} "
                        f"(legal: {' '.join(map(str, state.legal_moves()))})"
                    )
                self.last_search = _search_info(last_info, time.monotonic() - started)
                return line.move
            engine.fail(f"engine {self.spec.name} sent {type(line).__name__} while searching")

    def _timing(self, budget: Budget, now: float) -> tuple[int, float, float]:
        """``(movetime ms, when to send stop, when the engine has hung)``."""
        own = self.spec.movetime_ms
        if budget.deadline is None:
            movetime = own or DEFAULT_MOVETIME_MS
            soft = now + movetime / 1000.0
            return movetime, soft, soft + STOP_WAIT_S
        left_ms = max(0.0, (budget.deadline - now) * 1000.0)
        movetime = int(max(1.0, left_ms - ENGINE_MARGIN_MS))
        if own is not None:
            movetime = min(movetime, own)
        soft = min(budget.deadline, now + (movetime + ENGINE_MARGIN_MS) / 1000.0)
        hard = soft + STOP_WAIT_S if budget.expires is None else hung_at(soft, budget.expires)
        return movetime, soft, hard


def _merge(old: Info | None, new: Info) -> Info:
    """The latest value of each field over a search's ``info`` lines."""
    if old is None:
        return new
    return Info(
        depth=new.depth if new.depth is not None else old.depth,
        score_cp=new.score_cp if new.score_cp is not None or new.mate is not None else old.score_cp,
        mate=new.mate if new.mate is not None or new.score_cp is not None else old.mate,
        nodes=new.nodes if new.nodes is not None else old.nodes,
        nps=new.nps if new.nps is not None else old.nps,
        pv=new.pv or old.pv,
    )


def _search_info(info: Info | None, elapsed_s: float) -> SearchInfo:
    """The search report from the engine's last ``info`` (nodes, depth, value, pv)."""
    if info is None:
        return SearchInfo(simulations=0, elapsed_s=elapsed_s, counts="nodes")
    return SearchInfo(
        simulations=info.nodes or 0,
        elapsed_s=elapsed_s,
        value=info.value,
        depth=info.depth,
        counts="nodes",
        pv=info.pv,
    )
