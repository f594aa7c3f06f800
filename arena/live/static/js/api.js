// Talking to the arena: JSON over HTTP, and the spectator websocket on the same port.
//
// SpectatorSocket keeps one spectator connection alive: it says hello, sends
// its watch, and after a drop reconnects with exponential backoff (plus jitter,
// so a restarted server is not hit by every viewer at once). Watching one
// match, it remembers the last event number it handed out and resumes with
// `since`, so the server replays exactly the missed events (or sends a fresh
// snapshot when they are too old). Events it has already seen are dropped.

export const PROTOCOL_VERSION = 1;

/** Fetch `path` and parse JSON; throws an Error carrying `.status` on a non-2xx reply. */
export async function fetchJSON(path, { signal } = {}) {
  const response = await fetch(path, { headers: { Accept: "application/json" }, signal });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = new Error((body && body.error) || `${path}: HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

/** The websocket URL of this page's server (ws: or wss: to match the page). */
export function socketURL() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/`;
}

const BACKOFF_START_MS = 500;
const BACKOFF_MAX_MS = 15000;

/**
 * A self-healing spectator connection.
 *
 * options:
 *   matchId    the match to watch, or null for every live match
 *   onSnapshot(snapshot)   full state: on first watch, or when resuming was impossible
 *   onEvent(event)         each new numbered event, in order, never twice
 *   onStatus(status, detail)  "connecting" | "live" | "reconnecting" | "closed"
 *   onError(error)         an `error` message from the server (e.g. no_such_match)
 */
export class SpectatorSocket {
  constructor({ matchId = null, onSnapshot, onEvent, onStatus, onError, url = socketURL() }) {
    this.matchId = matchId;
    this.url = url;
    this.handlers = { onSnapshot, onEvent, onStatus, onError };
    // Last event number handed out, per match: the `since` of the next resume.
    this.lastSeq = new Map();
    this.attempt = 0;
    this.reconnects = 0;
    this.stopped = false;
    this.ws = null;
    this.timer = null;
  }

  /** Open the connection (idempotent). */
  start() {
    this.stopped = false;
    if (!this.ws && !this.timer) this.connect();
    return this;
  }

  /** Close for good: no more reconnects (e.g. the watched match has ended). */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = null;
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      ws.close(1000, "done");
    }
    this.status("closed");
  }

  status(name, detail) {
    this.handlers.onStatus?.(name, detail);
  }

  connect() {
    this.timer = null;
    this.status(this.reconnects ? "reconnecting" : "connecting", { attempt: this.attempt });
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      if (ws !== this.ws) return;
      this.send({ type: "hello", role: "spectator", version: PROTOCOL_VERSION });
    });
    ws.addEventListener("message", (message) => {
      if (ws !== this.ws) return;
      let data;
      try {
        data = JSON.parse(message.data);
      } catch {
        return; // the server only sends JSON; ignore anything else rather than crash
      }
      this.receive(data);
    });
    ws.addEventListener("close", () => {
      if (ws !== this.ws) return;
      this.ws = null;
      if (!this.stopped) this.scheduleReconnect();
    });
    // An "error" event is always followed by "close", which does the work.
  }

  scheduleReconnect() {
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** this.attempt);
    const delay = base / 2 + Math.random() * (base / 2);
    this.attempt += 1;
    this.reconnects += 1;
    this.status("reconnecting", { attempt: this.attempt, delayMs: Math.round(delay) });
    this.timer = setTimeout(() => this.connect(), delay);
  }

  send(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  /** Ask for the watched match again, resuming after the last event seen (if any). */
  watch() {
    if (this.matchId === null) {
      this.send({ type: "watch" });
      return;
    }
    const since = this.lastSeq.get(this.matchId);
    const message = { type: "watch", match_id: this.matchId };
    if (since !== undefined) message.since = since;
    this.send(message);
  }

  receive(data) {
    switch (data.type) {
      case "welcome":
        this.attempt = 0; // a successful handshake resets the backoff
        this.status("live");
        this.watch();
        break;
      case "snapshot":
        this.lastSeq.set(data.match_id, data.last_event);
        this.handlers.onSnapshot?.(data);
        break;
      case "event": {
        const last = this.lastSeq.get(data.match_id);
        if (last !== undefined && data.seq <= last) return; // already seen before a resume
        if (last !== undefined && data.seq > last + 1 && this.matchId !== null) {
          // A hole in the numbering: ask the server to fill it rather than show a wrong board.
          this.watch();
          return;
        }
        this.lastSeq.set(data.match_id, data.seq);
        this.handlers.onEvent?.(data);
        break;
      }
      case "error":
        this.handlers.onError?.(data);
        break;
      default:
        break; // messages for other roles or newer servers: not ours to handle
    }
  }
}
