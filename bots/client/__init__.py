"""The bot client runtime: play a strategy on an arena server over websockets."""
