"""The ``arena`` command line: serve, demo, watch and administration."""

from arena.cli.main import main

__all__ = ["main"]
