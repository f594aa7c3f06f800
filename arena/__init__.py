"""The arena server: connections, lobby, match runner, persistence, ratings and spectators.

It may import ``protocol``; only the command line (``arena.cli``) and
``arena.analysis.worker`` (the Connect Four solver's processes for ``arena
analyse``) import ``bots``, through its public API (docs/architecture.md,
``tests/test_import_contracts.py``). Persistence lives in ``arena.store``, Elo arithmetic in
``arena.ratings``, the exception tree in ``arena.errors``.
"""
