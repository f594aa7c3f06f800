"""The arena server: connections, lobby, match runner, persistence, ratings and spectators.

It may import ``protocol`` but never ``bots``, save in the documented exceptions
(``arena.analysis.worker`` runs the Connect Four solver for ``arena analyse``,
in its own processes; ``arena.cli.play`` runs a built-in strategy against a
person at the terminal). Persistence lives in ``arena.store``, Elo arithmetic in
``arena.ratings``, the exception tree in ``arena.errors``.
"""
