"""The network edge: the listener, websocket and HTTP connections, hello/auth and limits."""
