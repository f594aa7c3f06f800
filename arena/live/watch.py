"""``arena watch``: follow a live match in the terminal, as a spectator.

::

    arena watch                  # a live match, or the next one to start
    arena watch m-42             # that match (a finished one shows its final position)
    arena watch --follow         # and then the next, and the next...

It connects like any spectator (``hello`` role ``spectator``, then ``watch``;
see ``docs/protocol.md``), keeps the match's moves, position and clocks from
the ``snapshot`` and the numbered ``event``s, and draws the board with the
game's own ``render()``. On a terminal the screen is redrawn in place (plain
ANSI); otherwise (a pipe, a file) every new position is printed below the last.
Moves are shown as the protocol numbers them (connect4: columns 0-6, the
numbers under the board).

Without a match id it watches every live match, picks the first snapshot that
arrives, then narrows the subscription to that match (``unwatch`` everything,
``watch`` it with ``since`` so no event is missed in between). A gap in the
event numbers is repaired the same way.

Exit status: 0 when the match ended (with ``--follow``: never, until Ctrl-C),
1 when the server refuses, cannot be reached, or goes away first.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from protocol.errors import ProtocolError
from protocol.games import decode_state
from protocol.messages import (
    PROTOCOL_VERSION,
    Analysis,
    Clocks,
    Error,
    Event,
    Hello,
    MatchEnd,
    Snapshot,
    TimeControl,
    Unwatch,
    Watch,
    Welcome,
    parse_server_message,
    principal_line,
)

MARKS = ("x", "o")
"""How ``render()`` draws player 0 and player 1."""

CLEAR = "\x1b[H\x1b[2J"


class WatchError(Exception):
    """The watch cannot go on: refused, unreachable, or the connection closed."""


@dataclass(slots=True)
class MatchView:
    """What a spectator knows about one match, folded from its snapshot and events."""

    match_id: str
    game: str
    players: tuple[str, str]
    ratings: tuple[float, float] | None
    time_control: TimeControl
    moves: list[int]
    position: str
    clocks: Clocks
    last_event: int
    end: MatchEnd | None = None
    analysis: Analysis | None = None
    think_ms: list[int] = field(default_factory=list)

    @classmethod
    def from_snapshot(cls, snap: Snapshot) -> MatchView:
        """A view of the match exactly as ``snap`` describes it."""
        return cls(
            match_id=snap.match_id,
            game=snap.game,
            players=snap.players,
            ratings=snap.ratings,
            time_control=snap.time_control,
            moves=list(snap.moves),
            position=snap.position,
            clocks=snap.clocks,
            last_event=snap.last_event,
            end=snap.end,
            analysis=snap.analysis,
        )

    def apply(self, event: Event) -> None:
        """Fold the next event (``seq == last_event + 1``) into the view."""
        self.last_event = event.seq
        if event.moved is not None:
            self.moves.append(event.moved.move)
            self.position = event.moved.position
            self.clocks = event.moved.clocks
            self.think_ms.append(event.moved.think_ms)
            self.analysis = event.analysis
        if event.end is not None:
            self.end = event.end


def render(view: MatchView) -> str:
    """The match as text: players, board, clocks, moves and, at the end, the result."""
    state = decode_state(view.game, view.position)
    names = [
        f"{name} ({MARKS[i]}" + (f", {view.ratings[i]:.0f})" if view.ratings is not None else ")")
        for i, name in enumerate(view.players)
    ]
    tc = view.time_control
    lines = [
        f"match {view.match_id}  {view.game}  {names[0]} vs {names[1]}  "
        f"{tc.move_ms} ms/move" + (f" + {tc.bank_ms} ms bank" if tc.bank_ms else ""),
        "",
        state.render(),
        "",
        "clocks: "
        + "   ".join(
            f"{view.players[i]} {view.clocks.time_left_ms[i] / 1000:.1f} s"
            + (" <" if view.end is None and state.to_move == i else "")
            for i in (0, 1)
        ),
        f"moves ({len(view.moves)}): " + (" ".join(map(str, view.moves)) or "-"),
    ]
    search = describe_search(view.analysis)
    if search:
        lines.append(f"last search: {search}")
    if view.end is not None:
        lines.append(describe_end(view.players, view.end))
    return "\n".join(lines)


def describe_search(analysis: Analysis | None) -> str:
    """What the last mover reported about its search, each count named for what it counts,
    and the principal line of its tree if it sent one."""
    if analysis is None:
        return ""
    parts = [
        f"{count} {unit}"
        for count, unit in ((analysis.simulations, "simulations"), (analysis.nodes, "nodes"))
        if count is not None
    ]
    if analysis.depth is not None:
        parts.append(f"depth {analysis.depth}")
    if analysis.value is not None:
        parts.append(f"value {analysis.value:+.2f}")
    if analysis.tree:
        line = " ".join(str(analysis.tree[i].move) for i in principal_line(analysis.tree))
        parts.append(f"line {line}")
    return ", ".join(parts)


def describe_end(players: tuple[str, str], end: MatchEnd) -> str:
    """One line: result, termination, reason, and whether it was rated."""
    text = f"result {end.result} ({end.termination}): {end.reason}"
    if end.winner is not None:
        text += f"; winner {players[end.winner]}"
    text += "; rated" if end.rated else "; unrated"
    return text


class Printer:
    """Redraws in place on a terminal; prints each position below the last otherwise."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._tty = out.isatty()

    def snapshot(self, view: MatchView) -> None:
        """Show a whole match (first sight, or after a resync)."""
        self._write(render(view))

    def moved(self, view: MatchView) -> None:
        """Show the position after the latest move."""
        if self._tty:
            self._write(render(view))
            return
        player = (len(view.moves) - 1) % 2
        think = f" in {view.think_ms[-1]} ms" if view.think_ms else ""
        clocks = " / ".join(f"{ms / 1000:.1f}" for ms in view.clocks.time_left_ms)
        board = decode_state(view.game, view.position).render()
        self._write(
            f"ply {len(view.moves) - 1}: {view.players[player]} ({MARKS[player]}) "
            f"plays {view.moves[-1]}{think}; clocks {clocks} s\n{board}"
        )

    def ended(self, view: MatchView) -> None:
        """Show the result."""
        assert view.end is not None
        if self._tty:
            self._write(render(view))
        else:
            self._write(describe_end(view.players, view.end))

    def note(self, text: str) -> None:
        """A line of status (waiting, switching matches)."""
        self._write(text)

    def _write(self, text: str) -> None:
        self._out.write((CLEAR if self._tty else "") + text + "\n")
        self._out.flush()


class Spectator:
    """One spectator connection following one match at a time."""

    def __init__(self, ws: ClientConnection, printer: Printer) -> None:
        self._ws = ws
        self._printer = printer
        self._done: set[str] = set()

    async def send(self, message: Watch | Unwatch | Hello) -> None:
        """Send one message."""
        await self._ws.send(message.to_json())

    async def receive(self) -> Snapshot | Event:
        """The next snapshot or event; raises ``WatchError`` on an error or a closed socket."""
        while True:
            try:
                frame = await self._ws.recv()
            except ConnectionClosed as exc:
                raise WatchError(f"the server closed the connection ({exc})") from None
            try:
                message = parse_server_message(frame)
            except ProtocolError as exc:
                raise WatchError(f"bad message from the server: {exc}") from None
            if isinstance(message, Error):
                raise WatchError(f"server error {message.code}: {message.message}")
            if isinstance(message, Snapshot | Event):
                return message

    async def choose(self, match_id: str | None) -> MatchView:
        """Subscribe to ``match_id`` (or the first live match seen) and return its snapshot."""
        if match_id is not None:
            await self.send(Watch(match_id=match_id))
        else:
            await self.send(Watch())
            self._printer.note("waiting for a live match...")
            while True:
                message = await self.receive()
                if (
                    isinstance(message, Snapshot)
                    and message.status == "live"
                    and message.match_id not in self._done
                ):
                    break
            # Narrow the subscription; ``since`` replays what happened in between.
            await self.send(Unwatch())
            await self.send(Watch(match_id=message.match_id, since=message.last_event))
            view = MatchView.from_snapshot(message)
            self._printer.snapshot(view)
            return view
        while True:
            message = await self.receive()
            if isinstance(message, Snapshot) and message.match_id == match_id:
                view = MatchView.from_snapshot(message)
                self._printer.snapshot(view)
                return view

    async def follow(self, view: MatchView) -> MatchView:
        """Apply events until the match ends; returns the finished view."""
        while view.end is None:
            message = await self.receive()
            if message.match_id != view.match_id:
                continue  # left over from the watch-everything phase
            if isinstance(message, Snapshot):
                view = MatchView.from_snapshot(message)
                self._printer.snapshot(view)
            elif message.seq <= view.last_event:
                continue  # a replayed event we already have
            elif message.seq > view.last_event + 1:
                # A gap: ask for what we missed (or a fresh snapshot).
                await self.send(Watch(match_id=view.match_id, since=view.last_event))
            else:
                view.apply(message)
                if message.moved is not None:
                    self._printer.moved(view)
        self._done.add(view.match_id)
        self._printer.ended(view)
        return view


async def run_watch(
    url: str, match_id: str | None = None, *, follow: bool = False, out: TextIO | None = None
) -> int:
    """Follow one match (or, with ``follow``, one after another); returns the exit status."""
    printer = Printer(out or sys.stdout)
    try:
        async with connect(url, compression=None, open_timeout=10) as ws:
            spectator = Spectator(ws, printer)
            await spectator.send(Hello(role="spectator", version=PROTOCOL_VERSION))
            welcome = parse_server_message(await ws.recv())
            if not isinstance(welcome, Welcome):
                raise WatchError(f"the server answered hello with {welcome.type}")
            while True:
                view = await spectator.choose(match_id)
                if view.end is None:  # else it is over: the snapshot showed the result
                    await spectator.follow(view)
                if not follow:
                    return 0
                match_id = None
    except (OSError, TimeoutError, InvalidHandshake, InvalidURI, ConnectionClosed) as exc:
        print(f"error: cannot watch on {url}: {exc}", file=sys.stderr)
    except (WatchError, ProtocolError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    return 1
