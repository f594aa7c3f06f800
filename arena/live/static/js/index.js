// The home page (/): live matches with small boards that move as the games do,
// a leaderboard per game, and recent results.
//
// Live matches come from a spectator socket watching every live match: one
// snapshot per match (also for matches that start later), then their events.
// A match that ends stays on the list for a moment with its result, and the
// leaderboard and recent results are reloaded. "Play a bot" lists the bots online
// that accept guests (GET /api/play), each with a Play button per game.

import { SpectatorSocket, fetchJSON } from "./api.js";
import { GAME_NAMES, gameFor } from "./boards/index.js";
import { describeResult, el, formatRating, formatTimeControl, formatWhen } from "./dom.js";
import { mountLeaderboards } from "./leaderboard.js";

const ENDED_LINGER_MS = 8000;

const liveList = document.getElementById("live-matches");
const liveCount = document.getElementById("live-count");
const recent = document.getElementById("recent-matches");
const connection = document.getElementById("connection");
const health = document.getElementById("health");
const playable = document.getElementById("play-bots");

const leaderboards = mountLeaderboards(document.getElementById("leaderboards"), GAME_NAMES);

/** match id -> {card, board, snapshot-ish info, moves} for the cards on screen. */
const cards = new Map();

function matchLink(id) {
  return `/matches/${encodeURIComponent(id)}`;
}

function updateEmptyState() {
  const live = [...cards.values()].filter((c) => !c.ended).length;
  liveCount.textContent = live ? `${live} playing` : "";
  if (!cards.size) {
    liveList.replaceChildren(el("p", { class: "muted empty" }, "No matches are being played right now."));
  } else {
    liveList.querySelector(".empty")?.remove();
  }
}

function playerLine(players, ratings) {
  return el("div", { class: "card-players" }, players.map((name, seat) => el("span", { class: "card-player" },
    el("span", { class: `chip small p${seat}`, "aria-hidden": "true" }),
    el("span", { class: "name" }, name),
    ratings ? el("span", { class: "rating muted" }, formatRating(ratings[seat])) : null)));
}

function upsertCard(snapshot) {
  let game;
  try {
    game = gameFor(snapshot.game);
  } catch {
    return; // a game this viewer cannot draw
  }
  let entry = cards.get(snapshot.match_id);
  if (!entry) {
    const boardBox = el("div", { class: "card-board" });
    const status = el("p", { class: "card-status muted" });
    const card = el("a", {
      class: "match-card",
      href: matchLink(snapshot.match_id),
      dataset: { matchId: snapshot.match_id, game: snapshot.game },
    },
    el("div", { class: "card-head" },
      el("span", { class: "game-name" }, game.title),
      el("span", { class: "muted" },
        formatTimeControl(snapshot.time_control.move_ms, snapshot.time_control.bank_ms))),
    boardBox,
    playerLine(snapshot.players, snapshot.ratings),
    status);
    if (!cards.size) liveList.replaceChildren();
    liveList.prepend(card);
    entry = { card, status, game, board: game.createBoard(boardBox, { mini: true }), ended: false };
    cards.set(snapshot.match_id, entry);
  }
  entry.players = snapshot.players;
  entry.moves = snapshot.moves.length;
  entry.board.update({ position: snapshot.position, lastMove: snapshot.moves.at(-1) ?? null });
  entry.status.textContent = snapshot.moves.length ? `move ${snapshot.moves.length}` : "starting";
  if (snapshot.end) markEnded(snapshot.match_id, snapshot.end);
  updateEmptyState();
}

function markEnded(matchId, end) {
  const entry = cards.get(matchId);
  if (!entry || entry.ended) return;
  entry.ended = true;
  entry.card.classList.add("ended");
  entry.status.textContent = describeResult(end, entry.players, entry.game.name);
  entry.status.classList.remove("muted");
  setTimeout(() => {
    entry.card.remove();
    cards.delete(matchId);
    updateEmptyState();
  }, ENDED_LINGER_MS);
  leaderboards.refresh(entry.game.name);
  loadRecent();
}

function onEvent(event) {
  const entry = cards.get(event.match_id);
  if (!entry) return;
  if (event.kind === "moved") {
    entry.moves = event.moved.ply + 1;
    entry.board.update({ position: event.moved.position, lastMove: event.moved.move, animate: true });
    entry.status.textContent = `move ${entry.moves}`;
  } else if (event.kind === "match_end") {
    markEnded(event.match_id, event.end);
  }
}

async function loadRecent() {
  try {
    const data = await fetchJSON("/api/matches?status=finished");
    const rows = (data.matches ?? []).slice(0, 12);
    if (!rows.length) {
      recent.replaceChildren(el("p", { class: "muted" }, "No finished matches yet."));
      return;
    }
    recent.replaceChildren(el("ul", { class: "recent" }, rows.map((m) => {
      let title = m.game;
      try {
        title = gameFor(m.game).title;
      } catch {
        // unknown game: show its raw name
      }
      return el("li", { dataset: { matchId: m.id } },
        el("a", { href: matchLink(m.id) },
          el("span", { class: "recent-players" },
            el("span", { class: m.winner === 0 ? "won" : null }, m.players[0]),
            el("span", { class: "muted" }, " vs "),
            el("span", { class: m.winner === 1 ? "won" : null }, m.players[1])),
          el("span", { class: "recent-result" }, m.result ?? ""),
          el("span", { class: "recent-meta muted" },
            `${title} · ${formatWhen(m.ended_at ?? m.started_at)}`)));
    })));
  } catch (error) {
    recent.replaceChildren(el("p", { class: "error" }, `Recent results unavailable: ${error.message}`));
  }
}

/** The link that opens the play page for `bot` in `game`. */
function playLink(bot, game, busy) {
  let title = game;
  try {
    title = gameFor(game).title;
  } catch {
    // a game this viewer cannot draw: the play page will say so
  }
  return el("a", {
    class: `play-button${busy ? " busy" : ""}`,
    href: `/play/${encodeURIComponent(bot)}?game=${encodeURIComponent(game)}`,
    dataset: { bot, game },
    title: busy ? `${bot} is playing as many games as it takes; it may decline` : null,
  }, `Play ${title}`);
}

async function loadPlayable() {
  try {
    const { bots } = await fetchJSON("/api/play");
    if (!bots.length) {
      playable.replaceChildren(el("p", { class: "muted" }, "No bot online accepts guests right now."));
      return;
    }
    playable.replaceChildren(
      el("p", { class: "muted" }, "Play an unrated game against a bot, in your browser."),
      el("ul", { class: "play-list" }, bots.map((row) => el("li", { dataset: { bot: row.bot } },
        el("span", { class: "name" }, row.bot, row.busy ? el("span", { class: "muted" }, " · busy") : null),
        ...row.games.map((game) => playLink(row.bot, game, row.busy))))));
  } catch (error) {
    playable.replaceChildren(el("p", { class: "error" }, `Unavailable: ${error.message}`));
  }
}

async function loadHealth() {
  try {
    const h = await fetchJSON("/healthz");
    health.textContent = [
      h.server, `${h.bots_online} bots online`, `${h.live_matches} live`, `${h.spectators} watching`,
    ].join(" · ");
  } catch {
    health.textContent = "";
  }
}

const socket = new SpectatorSocket({
  matchId: null,
  onSnapshot: upsertCard,
  onEvent,
  onStatus: (status) => {
    connection.dataset.status = status;
    const labels = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…" };
    connection.textContent = labels[status] ?? "";
    if (status === "live" && socket.reconnects > 0) {
      // Back after a drop: the server re-sends a snapshot of every live match, so start
      // over rather than keep cards of matches that ended while we were away.
      for (const entry of cards.values()) entry.card.remove();
      cards.clear();
    }
    if (status === "live") updateEmptyState();
  },
});
socket.start();
loadRecent();
loadHealth();
loadPlayable();
setInterval(loadHealth, 15000);
setInterval(loadPlayable, 15000);
