"""The contract shared by the arena server and its bots: game rules and wire messages.

Standard library only. ``protocol.games`` holds the pure game rules;
``protocol.messages`` the typed wire messages; ``protocol.errors`` the
exception tree of this package.
"""
