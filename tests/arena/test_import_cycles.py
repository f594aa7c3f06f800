"""No import circle among arena's modules: each part is built from the parts below it.

Read from the source (AST), not by importing: the imports a module runs when
it is loaded (top-level statements, including those under a module-level
``if``/``try``), without those inside functions (deliberately deferred).
Those under ``if TYPE_CHECKING:`` are left out of the load-time graph; a
second test counts them too, since a part that names the whole server in its
annotations (as ``arena.metrics`` and ``arena.tournaments.service`` once did)
is a circle in the design even when Python never runs it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path) -> str:
    """``arena/net/gateway.py`` -> ``arena.net.gateway``; a package is its ``__init__``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level(body: list[ast.stmt], typing_too: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The module-level import statements of ``body`` (``typing_too``: with
    those under ``if TYPE_CHECKING:``)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if typing_too or not _is_type_checking(node.test):
                yield from _module_level(node.body, typing_too)
            yield from _module_level(node.orelse, typing_too)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block, typing_too)
            for handler in node.handlers:
                yield from _module_level(handler.body, typing_too)
        elif isinstance(node, ast.With):
            yield from _module_level(node.body, typing_too)


def imports_of(name: str, path: Path, modules: set[str], typing_too: bool = False) -> set[str]:
    """The arena modules ``name`` (at ``path``) imports at module level."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _module_level(tree.body, typing_too):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from package import module`` imports the module; otherwise a name of ``base``.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph(typing_too: bool = False) -> dict[str, set[str]]:
    """Every arena module and the arena modules it imports at module level."""
    paths = {module_name(p): p for p in sorted((ROOT / "arena").rglob("*.py"))}
    modules = set(paths)
    return {name: imports_of(name, path, modules, typing_too) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_reads_the_imports_it_should() -> None:
    graph = import_graph()
    assert "arena.net.presence" in graph["arena.net.gateway"]
    assert "arena.figures" in graph["arena.metrics"]
    # ``arena.tournaments.service`` is imported inside ``ArenaServer._start``: deferred;
    # ``arena.server`` names it under ``TYPE_CHECKING`` only.
    assert "arena.tournaments.service" not in graph["arena.server"]
    assert "arena.tournaments.service" in import_graph(typing_too=True)["arena.server"]


def test_a_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_among_arena_modules() -> None:
    assert cycles(import_graph()) == []


def test_no_circle_even_through_annotations() -> None:
    assert cycles(import_graph(typing_too=True)) == []
