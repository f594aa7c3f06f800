"""UGI engines: any program speaking the Universal Game Interface plays as strategy ``ugi:CMD``.

``lines`` reads and writes the protocol's lines, ``spec`` parses the command,
``process`` runs one engine under limits, ``strategy`` is the ``Strategy``.
See docs/engines.md.

Errors (in the ``bots.strategy`` tree)::

    StrategyOptionError   a bad ``ugi:`` command (no such program, a malformed --option)
    SearchError           the engine could not start or shake hands when the strategy was built
    Forfeit
    └── EngineFault       the engine crashed, hung, wrote garbage or played an illegal move:
                          it loses that game; the next move starts a fresh engine
"""

from bots.ugi.spec import parse_engine_command

__all__ = ["parse_engine_command"]
