"""Matches: the referee and its clocks, the lobby, and the registry of live matches."""
