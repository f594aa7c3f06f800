"""The store's import contract: ``arena.store`` imports nothing from play, net or live."""

from __future__ import annotations

import ast
from pathlib import Path

import arena.store

FORBIDDEN = ("arena.play", "arena.net", "arena.live")


def imported_modules(tree: ast.AST) -> list[str]:
    """Every module an ``import`` or ``from ... import`` of ``tree`` names (absolute only)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_store_imports_nothing_from_play_net_or_live() -> None:
    package = Path(arena.store.__file__).parent
    found = [
        f"{path.relative_to(package)}: {name}"
        for path in sorted(package.rglob("*.py"))
        for name in imported_modules(ast.parse(path.read_text(), str(path)))
        if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN)
    ]
    assert found == []


def test_the_check_sees_a_forbidden_import() -> None:
    tree = ast.parse("from arena.play.guests import X\nimport arena.net.api\nimport arena.stats\n")
    assert [n for n in imported_modules(tree) if n.startswith(FORBIDDEN)] == [
        "arena.play.guests",
        "arena.net.api",
    ]
