"""The search tree a bot may report with its move: ``TreeNode`` and the bounded ``tree`` field.

An ``analysis`` may carry ``tree``: the top of the bot's search tree, a few
plies deep, flattened into a list so that the message nests no deeper than
one without it. Each node names its ``parent`` by index into the same list
(absent for a move from the current position), and a parent always comes
before its children, so a reader builds the tree in one pass. ``value`` is
the mean result, in [-1, 1], for the player who plays the node's ``move``.

The list holds at most ``MAX_TREE_NODES`` nodes; what to put in them (which
children, how deep) is the bot's choice. The built-in MCTS strategies send
the most visited children of the most visited moves (``bots.strategies.mcts``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypeGuard

from protocol.messages.codes import MAX_ANALYSIS_MOVES, MAX_COUNT, MAX_MOVE, MAX_PLY, ErrorCode
from protocol.messages.fields import Array, Float, Int, JsonDict, Nullable, Obj, _fail
from protocol.messages.spec import Wire, fast_init

MAX_TREE_NODES = 64
"""Most nodes an ``analysis.tree`` may hold (a move of the largest valid size stays
under the bot message limit)."""


@fast_init
@dataclass(frozen=True, slots=True)
class TreeNode(Wire):
    """One node of a reported search tree: a move, its visits and value, and its parent."""

    move: Annotated[int, Int(0, MAX_MOVE)]
    visits: Annotated[int, Int(0, MAX_COUNT)]
    value: Annotated[float | None, Nullable(Float())] = None
    """Mean result in [-1, 1] for the player who plays ``move``."""
    parent: Annotated[int | None, Nullable(Int(0, MAX_TREE_NODES - 1))] = None
    """Index in the tree of the node this one follows; absent for a move of the position."""


class TreeSpec(Array):
    """A flat tree of ``TreeNode``: up to ``MAX_TREE_NODES``, each parent before its children."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(Obj(TreeNode), 0, MAX_TREE_NODES)

    def parse(self, value: object, path: str) -> tuple[Any, ...]:
        """The array checks, then that every ``parent`` points to an earlier node."""
        nodes = super().parse(value, path)
        for index, node in enumerate(nodes):
            if node.parent is not None and node.parent >= index:
                raise _fail(
                    ErrorCode.BAD_VALUE,
                    f"{path}[{index}].parent",
                    f"{node.parent} is not the index of an earlier node",
                )
        return nodes

    def schema(self) -> JsonDict:
        """The array schema (the parent order is documented, not expressible in the schema)."""
        out = super().schema()
        out["description"] = "Search tree nodes, each parent (an index) before its children."
        return out


def children(tree: Sequence[TreeNode]) -> list[list[int]]:
    """For every node, and last for the position itself, the indices of its children in order."""
    out: list[list[int]] = [[] for _ in range(len(tree) + 1)]
    for index, node in enumerate(tree):
        out[len(tree) if node.parent is None else node.parent].append(index)
    return out


def principal_line(tree: Sequence[TreeNode]) -> list[int]:
    """Indices of the principal line: from the position, the most visited child at each step."""
    below = children(tree)
    line: list[int] = []
    options = below[len(tree)]
    while options:
        best = max(options, key=lambda index: tree[index].visits)
        line.append(best)
        options = below[best]
    return line


# The fast path for a whole ``analysis`` -----------------------------------------------

_ANALYSIS_KEYS = frozenset(
    ("simulations", "sims_per_s", "value", "depth", "moves", "nodes", "nodes_per_s", "pv", "tree")
)
_STAT_KEYS = frozenset(("move", "visits", "value"))
_NODE_KEYS = frozenset(("move", "visits", "value", "parent"))


_INF = math.inf


def _count(value: object, hi: int = MAX_COUNT) -> TypeGuard[int]:
    return type(value) is int and 0 <= value <= hi


def _number(value: object) -> float | None:
    """``value`` as the float ``Float()`` makes of it, or None to leave it to the full parser."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is int and -(1 << 53) <= value <= 1 << 53:
        return float(value)
    return None


def fast_analysis(
    data: object, analysis: type[Any], stat: type[Any], text: str | None = None
) -> Any:
    """The ``analysis`` (an ``analysis`` instance) that ``data`` holds in its usual valid form,
    or None: then the full parser decides, and words any error. ``text``, the JSON
    ``data`` was decoded from, is kept in the result's ``text`` when given.

    The generic parser checks each of a report's fifty-odd values through its spec and
    builds each one's error path as it goes: some 50 us for a built-in MCTS's report, on
    every move. This checks the same rules directly and builds the path only if it must
    (it never does: anything it does not accept goes to the full parser). A test holds
    the two to the same results.
    """
    if type(data) is not dict or not data.keys() <= _ANALYSIS_KEYS:
        return None
    fields: dict[str, Any] = {}
    for name in ("simulations", "nodes"):
        value = data.get(name)
        if value is not None:
            if not _count(value):
                return None
            fields[name] = value
    for name in ("sims_per_s", "nodes_per_s", "value"):
        value = data.get(name)
        if value is not None:
            number = _number(value)
            if number is None or (name != "value" and number < 0.0):
                return None
            fields[name] = number
    depth = data.get("depth")
    if depth is not None:
        if not _count(depth, MAX_PLY):
            return None
        fields["depth"] = depth
    if "moves" in data:
        moves = data["moves"]
        if type(moves) is not list or len(moves) > MAX_ANALYSIS_MOVES:
            return None
        stats = []
        for item in moves:
            if type(item) is not dict or not item.keys() <= _STAT_KEYS:
                return None
            move, visits, value = item.get("move"), item.get("visits"), item.get("value")
            # _count and _number inlined: these loops run some 30 times per report.
            if not (
                type(move) is int
                and 0 <= move <= MAX_MOVE
                and type(visits) is int
                and 0 <= visits <= MAX_COUNT
            ):
                return None
            if type(value) is float:
                if not -_INF < value < _INF:  # NaN fails too
                    return None
            elif value is not None and (value := _number(value)) is None:
                return None
            stats.append(stat(move, visits, value))
        fields["moves"] = tuple(stats)
    pv = data.get("pv")
    if pv is not None:
        if type(pv) is not list or len(pv) > MAX_ANALYSIS_MOVES:
            return None
        for move in pv:
            if not _count(move, MAX_MOVE):
                return None
        fields["pv"] = tuple(pv)
    tree = data.get("tree")
    if tree is not None:
        if type(tree) is not list or len(tree) > MAX_TREE_NODES:
            return None
        nodes = []
        for index, item in enumerate(tree):
            if type(item) is not dict or not item.keys() <= _NODE_KEYS:
                return None
            move, visits, value = item.get("move"), item.get("visits"), item.get("value")
            parent = item.get("parent")
            if not (
                type(move) is int
                and 0 <= move <= MAX_MOVE
                and type(visits) is int
                and 0 <= visits <= MAX_COUNT
            ):
                return None
            if type(value) is float:
                if not -_INF < value < _INF:
                    return None
            elif value is not None and (value := _number(value)) is None:
                return None
            if parent is not None and not (type(parent) is int and 0 <= parent < index):
                return None
            nodes.append(TreeNode(move, visits, value, parent))
        fields["tree"] = tuple(nodes)
    if text is not None:
        fields["text"] = text
    return analysis(**fields)
