"""Live views of matches: spectator feeds, MQTT, the web viewer and the terminal watcher."""
