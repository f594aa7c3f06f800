"""Array-based UCT search tree and the compiled search loop for every kernel game.

The tree lives in preallocated flat arrays (``Tree``) reused between moves:
``first_child``, ``n_children``, ``move`` (int32), ``visits``, ``value``
(float64; ``value`` is summed from the point of view of the player who made the
node's move), ``proven`` (int8, same point of view: 1 won, -1 lost, 0 not
proven). ``meta[0]`` is the number of nodes in use. Node 0 is the root.

Expansion adds every child of a leaf at once, in shuffled order, the second
time the leaf is reached; selection takes unvisited children first, then UCT.
One simulation is exactly one select-expand-playout-backpropagate cycle.

The search is also an MCTS-Solver (Winands et al.): a move into a decided
position is proven won; a node with a proven-won child is proven lost for the
player who moved into it, and one whose children are all proven lost is proven
won. Selection takes a proven win at once and skips proven losses, so no more
simulations are spent on decided lines, and the search stops when the root is
proven. Draws are not proven (they stay ordinary averaged results).

The search dispatches on a small game id rather than taking the rules as
function arguments: Numba cannot cache functions that receive other compiled
functions, and the branch on a constant id costs nothing measurable. A game
gets its id here, one branch in each ``game_*`` dispatcher, and its entry in
``bots.kernels.KERNELS``; every dispatcher ends by raising, so an id without
a branch never runs another game's rules.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from bots.kernels import connect4, othello, tictactoe, uttt
from bots.kernels.rng import below

ONGOING = -1
DRAW = 2
CONNECT4 = 0
TICTACTOE = 1
UTTT = 2
OTHELLO = 3
MAX_MOVES = 81
MAX_DEPTH = 128


class Tree(NamedTuple):
    """The flat arrays of one search tree (see the module docstring)."""

    first_child: np.ndarray
    n_children: np.ndarray
    move: np.ndarray
    visits: np.ndarray
    value: np.ndarray
    proven: np.ndarray
    meta: np.ndarray

    @property
    def capacity(self) -> int:
        """How many nodes fit."""
        return len(self.visits)


def new_tree(capacity: int) -> Tree:
    """Allocate a tree of ``capacity`` nodes (about 33 bytes each)."""
    capacity = max(capacity, MAX_MOVES + 1)
    return Tree(
        np.zeros(capacity, dtype=np.int32),
        np.zeros(capacity, dtype=np.int32),
        np.zeros(capacity, dtype=np.int32),
        np.zeros(capacity, dtype=np.float64),
        np.zeros(capacity, dtype=np.float64),
        np.zeros(capacity, dtype=np.int8),
        np.zeros(2, dtype=np.int64),
    )


@numba.njit(cache=True, nogil=True)
def game_status(game: int, st: np.ndarray) -> int:
    """Status code of ``st`` for kernel game ``game``."""
    if game == CONNECT4:
        return connect4.status(st)
    if game == TICTACTOE:
        return tictactoe.status(st)
    if game == UTTT:
        return uttt.status(st)
    if game == OTHELLO:
        return othello.status(st)
    raise ValueError("unknown kernel game")


@numba.njit(cache=True, nogil=True)
def game_to_move(game: int, st: np.ndarray) -> int:
    """The player to move in ``st``."""
    if game == CONNECT4:
        return st[connect4.TO_MOVE]
    if game == TICTACTOE:
        return st[tictactoe.TO_MOVE]
    if game == UTTT:
        return st[uttt.TO_MOVE]
    if game == OTHELLO:
        return st[othello.TO_MOVE]
    raise ValueError("unknown kernel game")


@numba.njit(cache=True, nogil=True)
def game_legal_moves(game: int, st: np.ndarray, out: np.ndarray) -> int:
    """Legal moves of ``st`` into ``out``; returns the count."""
    if game == CONNECT4:
        return connect4.legal_moves(st, out)
    if game == TICTACTOE:
        return tictactoe.legal_moves(st, out)
    if game == UTTT:
        return uttt.legal_moves(st, out)
    if game == OTHELLO:
        return othello.legal_moves(st, out)
    raise ValueError("unknown kernel game")


@numba.njit(cache=True, nogil=True)
def game_play(game: int, st: np.ndarray, move: int) -> int:
    """Apply ``move`` to ``st`` in place; returns the new status."""
    if game == CONNECT4:
        return connect4.play(st, move)
    if game == TICTACTOE:
        return tictactoe.play(st, move)
    if game == UTTT:
        return uttt.play(st, move)
    if game == OTHELLO:
        return othello.play(st, move)
    raise ValueError("unknown kernel game")


@numba.njit(cache=True, nogil=True)
def game_playout(game: int, heavy: bool, st: np.ndarray, rng: np.ndarray) -> int:
    """Play ``st`` out (uniformly, or by the heavy rules); returns the final status."""
    if game == CONNECT4:
        return connect4.playout_heavy(st, rng) if heavy else connect4.playout(st, rng)
    if game == TICTACTOE:
        return tictactoe.playout_heavy(st, rng) if heavy else tictactoe.playout(st, rng)
    if game == UTTT:
        return uttt.playout_heavy(st, rng) if heavy else uttt.playout(st, rng)
    if game == OTHELLO:
        return othello.playout_heavy(st, rng) if heavy else othello.playout(st, rng)
    raise ValueError("unknown kernel game")


@numba.njit(cache=True, nogil=True)
def reset(
    first_child: np.ndarray,
    n_children: np.ndarray,
    move: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    proven: np.ndarray,
    meta: np.ndarray,
) -> None:
    """Empty the tree down to a fresh root."""
    first_child[0] = 0
    n_children[0] = 0
    move[0] = -1
    visits[0] = 0.0
    value[0] = 0.0
    proven[0] = 0
    meta[0] = 1
    meta[1] = 0


@numba.njit(cache=True, nogil=True)
def _expand(
    node: int,
    moves: np.ndarray,
    n: int,
    first_child: np.ndarray,
    n_children: np.ndarray,
    move: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    proven: np.ndarray,
    meta: np.ndarray,
    rng: np.ndarray,
) -> bool:
    """Give ``node`` one child per move (shuffled); False when the tree is full."""
    start = meta[0]
    if start + n > len(visits):
        return False
    for i in range(n - 1, 0, -1):
        j = below(rng, i + 1)
        moves[i], moves[j] = moves[j], moves[i]
    for i in range(n):
        k = start + i
        first_child[k] = 0
        n_children[k] = 0
        move[k] = moves[i]
        visits[k] = 0.0
        value[k] = 0.0
        proven[k] = 0
    first_child[node] = start
    n_children[node] = n
    meta[0] = start + n
    return True


@numba.njit(cache=True, nogil=True)
def _select(
    node: int,
    c: float,
    first_child: np.ndarray,
    n_children: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    proven: np.ndarray,
) -> int:
    """The child to descend to: a proven win, else the first unvisited, else the best UCT.

    Proven losses are skipped unless every child is one.
    """
    start = first_child[node]
    end = start + n_children[node]
    log_n = np.log(max(visits[node], 1.0))
    best = start
    best_score = -1e300
    for i in range(start, end):
        p = proven[i]
        if p == 1:
            return i
        if p == -1:
            continue
        v = visits[i]
        if v == 0.0:
            return i
        score = value[i] / v + c * np.sqrt(log_n / v)
        if score > best_score:
            best_score = score
            best = i
    return best


@numba.njit(cache=True, nogil=True)
def run(
    game: int,
    heavy: bool,
    root: np.ndarray,
    n_sims: int,
    c: float,
    first_child: np.ndarray,
    n_children: np.ndarray,
    move: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    proven: np.ndarray,
    meta: np.ndarray,
    rng: np.ndarray,
) -> int:
    """Run up to ``n_sims`` simulations from ``root`` into the tree; return how many ran.

    Call repeatedly with the same tree to search in chunks (the caller checks
    the clock between chunks). Stops early, and returns 0 once, when the root
    is decided or proven.
    """
    if game_status(game, root) != ONGOING or proven[0] != 0:
        return 0
    buf = np.empty(MAX_MOVES, dtype=np.int64)
    path = np.empty(MAX_DEPTH, dtype=np.int64)
    st = np.empty_like(root)
    root_player = game_to_move(game, root)
    if n_children[0] == 0:
        n = game_legal_moves(game, root, buf)
        _expand(0, buf, n, first_child, n_children, move, visits, value, proven, meta, rng)
    done = 0
    for _ in range(n_sims):
        if proven[0] != 0:
            break
        st[:] = root
        node = 0
        depth = 0
        path[0] = 0
        result = ONGOING
        while n_children[node] > 0:
            node = _select(node, c, first_child, n_children, visits, value, proven)
            depth += 1
            path[depth] = node
            if proven[node] != 0:
                break
            result = game_play(game, st, move[node])
            if result != ONGOING:
                _prove_terminal(node, depth, root_player, result, proven)
                break
            if visits[node] == 0.0:
                break
        if result == ONGOING and proven[node] == 0 and visits[node] > 0.0:
            n = game_legal_moves(game, st, buf)
            if _expand(
                node, buf, n, first_child, n_children, move, visits, value, proven, meta, rng
            ):
                node = first_child[node]
                depth += 1
                path[depth] = node
                result = game_play(game, st, move[node])
                if result != ONGOING:
                    _prove_terminal(node, depth, root_player, result, proven)
        if proven[node] != 0:
            # A proven node's result is known: no playout, and no noise from one.
            mover = root_player if depth % 2 == 1 else 1 - root_player
            result = mover if proven[node] == 1 else 1 - mover
        elif result == ONGOING:
            result = game_playout(game, heavy, st, rng)
        # The node at odd depth was entered by a move of the root player.
        if result == DRAW:
            reward = 0.0
        elif result == root_player:
            reward = 1.0
        else:
            reward = -1.0
        if depth % 2 == 0:
            reward = -reward
        for d in range(depth, -1, -1):
            k = path[d]
            visits[k] += 1.0
            value[k] += reward
            reward = -reward
        _propagate_proofs(path, depth, first_child, n_children, proven)
        done += 1
    meta[1] += done
    return done


@numba.njit(cache=True, nogil=True)
def _prove_terminal(
    node: int, depth: int, root_player: int, result: int, proven: np.ndarray
) -> None:
    """Mark a move into a decided position: won for its mover, or lost (draws stay open)."""
    if result == DRAW:
        return
    mover = root_player if depth % 2 == 1 else 1 - root_player
    proven[node] = 1 if result == mover else -1


@numba.njit(cache=True, nogil=True)
def _propagate_proofs(
    path: np.ndarray,
    depth: int,
    first_child: np.ndarray,
    n_children: np.ndarray,
    proven: np.ndarray,
) -> None:
    """Carry proofs from the end of ``path`` towards the root while they keep deciding parents."""
    for d in range(depth, 0, -1):
        k = path[d]
        parent = path[d - 1]
        if proven[k] == 1:
            # The side to move at ``parent`` has a winning move: whoever moved into it lost.
            proven[parent] = -1
        elif proven[k] == -1:
            start = first_child[parent]
            for i in range(start, start + n_children[parent]):
                if proven[i] != -1:
                    return
            proven[parent] = 1
        else:
            return
