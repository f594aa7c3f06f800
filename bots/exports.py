"""Names a package exports without importing their module until first used (PEP 562).

A package's ``__init__`` is its public API, but some of its names live in modules
that are costly to import (Numba kernels, the websocket runtime) or that would
import the package back while it is still initialising. ``lazy_exports`` gives the
package a module ``__getattr__`` that imports such a name's module on first access.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package`` that loads each name of ``where`` on first
    access; ``where`` maps a name to ``"module"`` (the same name there) or ``"module:name"``."""

    def __getattr__(name: str) -> object:
        found = where.get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = found.partition(":")
        return getattr(importlib.import_module(module), attribute or name)

    return __getattr__
