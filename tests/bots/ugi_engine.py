"""A scripted UGI engine for the tests: plays well-formed moves, or fails on purpose.

    python ugi_engine.py MODE [N [GAME]]

It plays GAME (default: ``$UGI_TEST_GAME``, else ``connect4``). MODE ``good``
plays the first legal move at once with a full ``info`` line; ``search``
does the same after waiting out each ``go``'s ``movetime``. The other modes
behave on the N-th ``go`` (default 1) and play like ``good`` before it:
``crash`` (SIGSEGV), ``exit`` (status 3), ``hang`` (ignores ``stop``),
``garbage`` (a line no UGI engine writes), ``long`` (a 100 KB line), ``illegal`` (a move that is not
legal), ``memory`` (allocates 1 GiB), ``cpu`` (spins, ignoring ``stop``),
``mute`` (never answers ``ugi``), ``die`` (answers, then exits with status
4), ``late`` (answers 50 ms after its ``movetime`` and then once more,
``bestmove 6``, on the ``stop`` it got meanwhile). Every mode writes one line to stderr at start.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from protocol.games import new_game


def main() -> None:
    mode = sys.argv[1]
    nth = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    game = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("UGI_TEST_GAME", "connect4")
    print(f"test engine {mode} starting", file=sys.stderr, flush=True)
    moves: list[int] = []
    goes = 0
    late = False
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "ugi":
            if mode == "mute":
                continue
            print("id name test-engine\nid author tests\noption name Style type string")
            print("ugiok")
        elif words[0] == "isready":
            print("readyok")
        elif words[0] == "position":
            moves = [int(w) for w in words[3:]]
        elif words[0] == "go":
            print(line.strip(), file=sys.stderr, flush=True)  # what the tests check it was told
            goes += 1
            state = new_game(game).play_all(moves)
            if goes == nth and mode == "late":
                late = True
                time.sleep(int(words[words.index("movetime") + 1]) / 1000 + 0.05)
            elif goes == nth:
                fail(mode, state.legal_moves())
            if mode == "search":
                time.sleep(int(words[words.index("movetime") + 1]) / 1000)
            move = state.legal_moves()[0]
            print(f"info depth 3 score cp 120 nodes 4321 nps 100000 pv {move} {move}")
            print(f"bestmove {move}")
        elif words[0] == "stop" and late:
            late = False
            print("bestmove 6")
        elif words[0] == "quit":
            return
        sys.stdout.flush()


def fail(mode: str, legal: list[int]) -> None:
    sys.stdout.flush()
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "exit":
        sys.exit(3)
    elif mode == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    elif mode == "long":
        print("info string " + "x" * 100_000, flush=True)
    elif mode == "garbage":
        print("I think column three looks nice", flush=True)
    elif mode == "illegal":
        print(f"bestmove {max(legal) + 50}", flush=True)
    elif mode == "memory":
        hog = bytearray(1 << 30)
        print(f"bestmove {legal[0] + len(hog) * 0}", flush=True)
    elif mode == "die":
        print(f"bestmove {legal[0]}", flush=True)
        sys.exit(4)
    elif mode == "cpu":
        while True:
            pass


if __name__ == "__main__":
    main()
