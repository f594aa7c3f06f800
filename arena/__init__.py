"""The arena server: connections, lobby, match runner, persistence, ratings and spectators.

It may import ``protocol`` but never ``bots``. Persistence lives in
``arena.store``, Elo arithmetic in ``arena.ratings``, the exception tree in
``arena.errors``.
"""
