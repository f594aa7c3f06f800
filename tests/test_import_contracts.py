"""The layers' import contracts, read from the source (AST), so a layer break fails a test.

Every ``import`` and ``from ... import`` counts wherever it stands: inside a function
(a lazy import is still a dependency) and under ``if TYPE_CHECKING:`` (the types
still tie the layers together).

- ``protocol`` imports only the standard library (and itself);
- ``arena/store`` imports nothing from the layers above it (``STORE_CLIENTS``:
  ``arena.play``, ``arena.net``, ``arena.live``, ``arena.tournaments``,
  ``arena.cluster``, ``arena.cli``): they are given records, never the reverse;
- in ``arena``, only the command-line layer (``arena/cli``) and the one launcher of
  solver processes (``arena/analysis/worker.py``) import ``bots``, and only names
  exported by ``bots/__init__.py`` or a subpackage's ``__init__``;
- ``bots`` never imports ``arena``, and its strategies never import its client (a
  strategy plays offline, in ``bots play``, as well as on a server);
- nothing outside ``arena/store`` opens a store session (``read_session``,
  ``write_session``, or the store's own ``_read``/``_write``): every unit of work is
  a store method (``Store.tournaments`` and the other facets), so persistence has one
  boundary.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BOTS_LAUNCHER = "arena/analysis/worker.py"
"""The one arena module outside ``arena/cli`` that may import ``bots``: the process-pool
side of ``arena analyse``, whose yardstick is the project's own Connect Four solver."""


@dataclass(frozen=True, slots=True)
class Import:
    """One imported name: ``module`` (absolute) and, for ``from`` imports, ``name``."""

    path: str
    line: int
    module: str
    name: str | None

    def __str__(self) -> str:
        what = f"from {self.module} import {self.name}" if self.name else f"import {self.module}"
        return f"{self.path}:{self.line}: {what}"


def _package_of(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts if parts[-1] == "__init__" else parts[:-1]).removesuffix(".__init__")


def imports_in(path: Path, root: Path | None = None) -> list[Import]:
    """Every import in ``path`` (a file under ``root``, default the repository), relative
    imports made absolute."""
    root = root or ROOT
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    where = str(path.relative_to(root))
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(where, node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = _package_of(path, root).split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, module] if module else base)
            found += [Import(where, node.lineno, module, alias.name) for alias in node.names]
    return found


SESSION_OPENERS = frozenset({"read_session", "write_session"})
"""The ways a store once lent out a transaction: only ``arena/store`` may call them."""

STORE_TRANSACTIONS = frozenset({"_read", "_write"})
"""The store's own transaction openers: outside ``arena/store``, never called on a store."""


def session_calls_in(path: Path, root: Path | None = None) -> list[str]:
    """Every call in ``path`` that opens a store session, as ``path:line: name``: a method
    named in ``SESSION_OPENERS`` on anything, or in ``STORE_TRANSACTIONS`` on a name
    ending in ``store`` (``self._store._write()``)."""
    root = root or ROOT
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    where = str(path.relative_to(root))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        owner_name = (
            owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        ).lower()
        if node.func.attr in SESSION_OPENERS or (
            node.func.attr in STORE_TRANSACTIONS and owner_name.endswith("store")
        ):
            found.append((node.lineno, node.func.attr))
    return [f"{where}:{line}: {name}" for line, name in sorted(found)]


def sources(*parts: str) -> list[Path]:
    """The Python files under ``ROOT/parts``."""
    return sorted(ROOT.joinpath(*parts).rglob("*.py"))


def imports_under(*parts: str) -> list[Import]:
    """Every import in the Python files under ``ROOT/parts``."""
    return [found for path in sources(*parts) for found in imports_in(path)]


def within(module: str, package: str) -> bool:
    """Whether ``module`` is ``package`` or inside it."""
    return module == package or module.startswith(package + ".")


@cache
def public_names(package: str) -> frozenset[str]:
    """What a package's ``__init__`` exports: its ``__all__``, else its top-level names
    not starting with ``_``."""
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    if not init.is_file():
        return frozenset()  # a module, not a package: nothing public by this contract
    tree = ast.parse(init.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "__all__":
                assert isinstance(node.value, ast.List | ast.Tuple), f"{init}: a literal __all__"
                return frozenset(ast.literal_eval(node.value))
            if isinstance(target, ast.Name):
                names.add(target.id)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return frozenset(name for name in names if not name.startswith("_"))


def test_protocol_imports_only_the_standard_library() -> None:
    bad = [
        str(found)
        for found in imports_under("protocol")
        if not within(found.module, "protocol")
        and found.module.split(".")[0] not in sys.stdlib_module_names
    ]
    assert bad == []


STORE_CLIENTS = ("play", "net", "live", "tournaments", "cluster", "cli")
"""The ``arena`` packages that use the store, which it therefore never imports."""


def test_the_store_imports_nothing_from_the_layers_above_it() -> None:
    bad = [
        str(found)
        for found in imports_under("arena", "store")
        if any(within(found.module, f"arena.{layer}") for layer in STORE_CLIENTS)
    ]
    assert bad == []


def test_only_the_store_opens_a_store_session() -> None:
    """The domain (tournaments, cluster, command line) asks the store for a unit of work
    (a method of ``Store`` or of a facet such as ``Store.tournaments``); it never holds a
    session of its own. Tests may open the store's private transactions to test it."""
    outside = [
        path
        for part in ("arena", "bench", "tests")
        for path in sources(part)
        if not path.is_relative_to(ROOT / "arena" / "store")
    ]
    bad = [
        call
        for path in outside
        for call in session_calls_in(path)
        if not (path.is_relative_to(ROOT / "tests") and call.endswith(("_read", "_write")))
    ]
    assert bad == []


def test_the_session_check_sees_a_session_opened_anywhere(tmp_path: Path) -> None:
    """A session opened in a ``with``, passed on, or through the store's private opener
    is found; another object's ``_write`` is not a session."""
    path = tmp_path / "arena" / "tournaments" / "probe.py"
    path.parent.mkdir(parents=True)
    path.write_text(
        "async def f(self, store):\n"
        "    async with store.read_session() as session:\n"
        "        await g(session)\n"
        "    await g(self._store.write_session())\n"
        "    async with self._store._write() as session:\n"
        "        pass\n"
        "    self._write('text')\n"
        "    store.read_sessions()\n",
        encoding="utf-8",
    )
    assert session_calls_in(path, tmp_path) == [
        "arena/tournaments/probe.py:2: read_session",
        "arena/tournaments/probe.py:4: write_session",
        "arena/tournaments/probe.py:5: _write",
    ]


def test_only_the_command_line_and_the_launcher_import_bots() -> None:
    bad = [
        str(found)
        for found in imports_under("arena")
        if within(found.module, "bots")
        and not found.path.startswith("arena/cli/")
        and found.path != BOTS_LAUNCHER
    ]
    assert bad == []


def test_the_arena_uses_only_the_public_api_of_bots() -> None:
    uses = [found for found in imports_under("arena") if within(found.module, "bots")]
    assert uses, "the arena's command line uses bots: the check below must see it"
    bad = [
        str(found)
        for found in uses
        if found.name is None or found.name not in public_names(found.module)
    ]
    assert bad == []


def test_bots_never_imports_the_arena() -> None:
    bad = [str(found) for found in imports_under("bots") if within(found.module, "arena")]
    assert bad == []


def test_the_strategies_never_import_the_client() -> None:
    layers = ("bots/strategies", "bots/kernels", "bots/ugi")
    bad = [
        str(found)
        for layer in layers
        for found in imports_under(*layer.split("/"))
        if within(found.module, "bots.client")
    ]
    bad += [
        str(found)
        for name in ("strategy.py", "budget.py", "match.py")
        for found in imports_in(ROOT / "bots" / name)
        if within(found.module, "bots.client")
    ]
    assert bad == []


def test_every_public_name_of_bots_exists() -> None:
    """The API the arena is held to is real: each exported name resolves."""
    import importlib

    for package in ("bots", "bots.client", "bots.strategies", "bots.kernels", "bots.ugi"):
        module = importlib.import_module(package)
        missing = [name for name in public_names(package) if not hasattr(module, name)]
        assert missing == [], package


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from bots.strategies.solver import warm_up\n", ["from bots.strategies.solver"]),
        ("if TYPE_CHECKING:\n    from bots.strategy import Strategy\n", ["from bots.strategy"]),
        ("def f():\n    import bots.client.runtime\n", ["import bots.client.runtime"]),
    ],
)
def test_the_checks_see_lazy_and_type_checking_imports(
    tmp_path: Path, source: str, expected: list[str]
) -> None:
    """A private import hidden in a function or under TYPE_CHECKING is still found and
    still fails the public-API check."""
    path = tmp_path / "arena" / "cli" / "probe.py"
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    found = imports_in(path, tmp_path)
    assert [str(f).split(": ", 1)[1].split(" import")[0] for f in found] == expected
    assert all(f.name is None or f.name not in public_names(f.module) for f in found)
