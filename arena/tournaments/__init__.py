"""Tournaments run by the arena: round robins, gauntlets, SPRT tests and ladders on paired
openings, stored in the database, resumable, live on the API, MQTT and the viewer.

The modules, in the order a tournament meets them (``docs/tournaments.md``):

- ``settings``: what a tournament is asked to be, checked (``TournamentSettings``);
- ``openings`` and ``suites``: opening suites (the shipped ones are data files in
  ``suites/``, made by ``suites``), checked against the rules;
- ``schedule``: which two bots play each game pair, on which opening;
- ``storage``: a tournament to and from its rows (the SQL is ``Store.tournaments``),
  read back as a ``TournamentState``;
- ``state``: one tournament in memory: counted games, void and forfeited slots, the SPRT;
- ``scheduler``: starts the games in a running server (``service`` plugs it in, ``api``
  adds its routes, ``admin`` is the admin token and file);
- ``standings`` and ``report``: the status object and its text form;
- ``local`` and ``ladder``: ``arena tournament run --local`` and ``arena ladder``.
"""
