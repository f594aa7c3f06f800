"""UGI engines: any program speaking the Universal Game Interface plays as strategy ``ugi:CMD``.

``lines`` reads and writes the protocol's lines, ``spec`` parses the command,
``process`` runs one engine under limits, ``strategy`` is the ``Strategy``.
See docs/engines.md.
"""
