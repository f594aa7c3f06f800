// The match page (/matches/<id>): a live board that follows the match over the
// spectator websocket, both clocks ticking locally, search telemetry, the move
// list, the result, and a replay (step buttons, slider, arrow keys) of any ply.
//
// The stored record (GET /api/matches/<id>) says whether the match is live.
// A live match is followed through the socket: its snapshot rebuilds the
// positions by replaying the moves with the game's rules, then each `moved`
// event appends the server's position and the mover's analysis. A finished
// match is replayed from the record's moves, each with the analysis its bot reported
// (stored with the move); once `arena analyse` solved its moves, the move list marks
// the blunders and the replay shows the solved value of each position (solved.js).
// Beside the board: the reported search tree of the shown move (searchtree.js); under
// it the evaluation graph of the whole match (evalgraph.js), which jumps the replay.
//
// The play page (/play/<bot>, play.js) is this page (the same match.html) plus a
// guest's controls: on that path this module loads play.js, which shows the play
// panel and, once its match starts, calls `openLive(matchId)`.

import { SpectatorSocket, fetchJSON } from "./api.js";
import { gameFor, positionsAfter } from "./boards/index.js";
import {
  describeResult, el, formatClock, formatRating, formatThink, formatTimeControl,
} from "./dom.js";
import { evalGraph, graphPoints } from "./evalgraph.js";
import { treeDiagram } from "./searchtree.js";
import { blunderTitle, describeValue, positionValue, solvedByPly } from "./solved.js";
import { TelemetryPanel, candidateStats } from "./telemetry.js";

const $ = (id) => document.getElementById(id);

const view = {
  root: $("match"),
  players: $("players"),
  board: $("board"),
  result: $("result"),
  moves: $("moves"),
  moveCount: $("move-count"),
  slider: $("slider"),
  ply: $("ply"),
  solved: $("solved"),
  follow: $("follow"),
  connection: $("connection"),
  title: $("match-title"),
  telemetry: new TelemetryPanel($("telemetry")),
  tree: $("tree"),
  treeDiagram: $("tree-diagram"),
  eval: $("eval"),
  evalGraph: $("eval-graph"),
  evalLegend: $("eval-legend"),
};

const state = {
  matchId: null, // set by openMatch / openLive
  game: null,
  board: null,
  players: ["", ""],
  ratings: [null, null],
  timeControl: { move_ms: 0, bank_ms: 0 },
  moves: [],
  positions: [],
  movers: [], // the seat that played each ply
  thinkMs: [],
  analyses: [], // analyses[k]: the mover's search report for the move at ply k
  solved: new Map(), // ply -> the solved value of that move (arena analyse), when analysed
  clocks: null,
  clocksAt: 0, // performance.now() when `clocks` arrived; the side to move ticks from here
  status: "loading", // "live" | "finished" | "aborted" | "missing" | "error"
  end: null,
  cursor: null, // null follows the latest position; k shows the position after k moves
  socket: null,
  you: null, // on the play page: the guest's name, marked "(you)"
};

// ---------------------------------------------------------------------------
// Loading

function setupGame(gameName) {
  if (state.game?.name === gameName) return;
  state.game = gameFor(gameName);
  state.board = state.game.createBoard(view.board);
  document.body.dataset.game = gameName;
}

function setTitle() {
  const [a, b] = state.players;
  const { move_ms: moveMs, bank_ms: bankMs } = state.timeControl;
  view.title.textContent = `${state.game.title} · ${formatTimeControl(moveMs, bankMs)}`;
  document.title = `${a} vs ${b} · ${state.game.title} · MCTS Arena`;
}

/** Fill the state from a stored match record (live or finished). */
function loadRecord(record) {
  setupGame(record.game);
  state.players = record.players;
  state.timeControl = { move_ms: record.move_ms, bank_ms: record.bank_ms };
  state.moves = record.moves.map((m) => m.move);
  state.movers = record.moves.map((m) => m.player);
  state.thinkMs = record.moves.map((m) => m.think_ms);
  // The stored analyses; one seen live but not (yet) in the record is kept.
  state.analyses = record.moves.map((m, ply) => m.analysis ?? state.analyses[ply] ?? null);
  state.positions = positionsAfter(state.game, state.moves);
  state.solved = solvedByPly(record.solved);
  if (record.status !== "live") {
    state.status = record.status;
    state.end = {
      winner: record.winner, result: record.result, termination: record.termination,
      fault: record.fault,
      // The record does not name the faulty seat; with a bot at fault it is the loser.
      faulty_player: record.fault === "bot" && record.winner !== null ? 1 - record.winner : null,
      reason: record.reason,
    };
  }
  setTitle();
}

/** A snapshot is the whole truth about a live (or just finished) match: rebuild from it. */
function loadSnapshot(snapshot) {
  setupGame(snapshot.game);
  state.players = snapshot.players;
  if (snapshot.ratings) state.ratings = [...snapshot.ratings];
  state.timeControl = snapshot.time_control;
  const known = state.moves;
  state.moves = [...snapshot.moves];
  // Keep think times and analyses of plies we already had (a snapshot after a long drop).
  const sameStart = known.every((move, i) => i >= state.moves.length || state.moves[i] === move);
  if (!sameStart) {
    state.thinkMs = [];
    state.analyses = [];
  }
  state.thinkMs.length = state.moves.length;
  state.analyses.length = state.moves.length;
  state.movers = state.moves.map((_, ply) => ply % 2);
  try {
    state.positions = positionsAfter(state.game, state.moves);
  } catch (error) {
    console.warn("replaying the snapshot's moves failed; showing its position only", error);
    state.positions = [...Array(state.moves.length).fill(state.game.initialPosition), snapshot.position];
  }
  if (state.positions.at(-1) !== snapshot.position) {
    console.warn("replayed position differs from the server's; using the server's");
    state.positions[state.positions.length - 1] = snapshot.position;
  }
  if (snapshot.analysis && state.moves.length) state.analyses[state.moves.length - 1] = snapshot.analysis;
  setClocks(snapshot.clocks);
  state.status = snapshot.status;
  if (snapshot.end) finish(snapshot.end);
  setTitle();
  render({ animate: false });
}

function setClocks(clocks) {
  state.clocks = clocks;
  state.clocksAt = performance.now();
}

function onMoved(moved, analysis) {
  if (moved.ply !== state.moves.length) {
    // Out of step (should not happen on one ordered stream): ask for a fresh snapshot.
    state.socket.lastSeq.delete(state.matchId);
    state.socket.watch();
    return;
  }
  state.moves.push(moved.move);
  state.movers.push(moved.player);
  state.positions.push(moved.position);
  state.thinkMs.push(moved.think_ms);
  state.analyses.push(analysis ?? null);
  setClocks(moved.clocks);
  render({ animate: state.cursor === null });
}

function finish(end) {
  state.end = end;
  state.status = end.result === "*" ? "aborted" : "finished";
  if (state.socket) {
    state.socket.stop();
    state.socket = null;
  }
}

async function refreshRecord() {
  // The stored record adds what the stream does not carry (think times of snapshot moves).
  try {
    const record = await fetchJSON(`/api/matches/${encodeURIComponent(state.matchId)}`);
    if (record.status !== "live" && record.moves.length === state.moves.length) {
      state.thinkMs = record.moves.map((m) => m.think_ms);
      state.analyses = record.moves.map((m, ply) => m.analysis ?? state.analyses[ply] ?? null);
      render({ animate: false });
    }
  } catch {
    // Not important: the board and result are already right.
  }
}

function follow() {
  state.socket = new SpectatorSocket({
    matchId: state.matchId,
    onSnapshot: (snapshot) => loadSnapshot(snapshot),
    onEvent: (event) => {
      if (event.kind === "moved") {
        onMoved(event.moved, event.analysis);
      } else if (event.kind === "match_end") {
        finish(event.end);
        render({ animate: false });
        refreshRecord();
      }
    },
    onStatus: (status, detail) => showConnection(status, detail),
    onError: async (error) => {
      if (error.code === "no_such_match") {
        // This server has no live feed for it: it finished (and was forgotten) before we
        // watched, or it is refereed by another arena node. The record tells which.
        state.socket?.stop();
        state.socket = null;
        await loadFromRecord({ followLive: false });
      }
    },
  }).start();
}

function showConnection(status, detail) {
  const labels = {
    connecting: "connecting…",
    live: "live",
    reconnecting: detail?.delayMs
      ? `reconnecting in ${(detail.delayMs / 1000).toFixed(1)} s…`
      : "reconnecting…",
    polling: "refreshing every few seconds",
    closed: "",
  };
  view.connection.dataset.status = status;
  view.connection.textContent = labels[status] ?? status;
}

const POLL_MS = 3000;

/**
 * Load the stored record; follow a live match over the socket, or (when this server
 * has no live feed for it) poll the record until it finishes.
 */
async function loadFromRecord({ followLive = true } = {}) {
  let record;
  try {
    record = await fetchJSON(`/api/matches/${encodeURIComponent(state.matchId)}`);
  } catch (error) {
    state.status = error.status === 404 ? "missing" : "error";
    view.root.dataset.status = state.status;
    view.board.replaceChildren(el("p", { class: "error" },
      error.status === 404
        ? `There is no match ${state.matchId}.`
        : `Could not load the match: ${error.message}`));
    return;
  }
  try {
    loadRecord(record);
  } catch (error) {
    // Most likely a game this viewer has no board for yet (see boards/index.js).
    state.status = "error";
    view.root.dataset.status = state.status;
    view.board.replaceChildren(el("p", { class: "error" }, `Cannot show this match: ${error.message}`));
    return;
  }
  await fillRatingsFromLeaderboard();
  if (record.status === "live") {
    state.status = "live";
    render({ animate: false });
    if (followLive) {
      follow();
    } else {
      showConnection("polling");
      setTimeout(() => loadFromRecord({ followLive: false }), POLL_MS);
    }
  } else {
    // A finished match opens at its final position, ready to step through.
    showConnection("closed");
    render({ animate: false });
  }
}

/** Ratings when no snapshot gave them (a stored match): today's leaderboard, the one rating. */
async function fillRatingsFromLeaderboard() {
  if (state.ratings.every((r) => r !== null)) return;
  try {
    const board = await fetchJSON(`/api/leaderboard?game=${encodeURIComponent(state.game.name)}`);
    state.players.forEach((bot, seat) => {
      const row = board.entries.find((entry) => entry.bot === bot);
      if (state.ratings[seat] === null && row) state.ratings[seat] = row.rating;
    });
  } catch {
    // Ratings stay "–".
  }
}

// ---------------------------------------------------------------------------
// Rendering

function shownPly() {
  return state.cursor === null ? state.moves.length : state.cursor;
}

function isLive() {
  return state.status === "live";
}

/** Milliseconds left for `seat` right now: the side to move ticks down from the last report. */
function clockNow(seat) {
  if (!state.clocks) return { left: state.timeControl.move_ms, bank: state.timeControl.bank_ms };
  let left = state.clocks.time_left_ms[seat];
  let bank = state.clocks.bank_ms[seat];
  const toMove = state.game.sideToMove(state.positions.at(-1));
  if (isLive() && seat === toMove) {
    let elapsed = performance.now() - state.clocksAt;
    const fromLeft = Math.min(left, elapsed);
    left -= fromLeft;
    elapsed -= fromLeft;
    bank = Math.max(0, bank - elapsed); // the bank pays once the move's own time is gone
  }
  return { left, bank };
}

function renderPlayers() {
  const toMove = isLive() ? state.game.sideToMove(state.positions.at(-1)) : null;
  const cards = state.players.map((name, seat) => {
    const rating = el("span", { class: "rating" }, formatRating(state.ratings[seat]));
    const won = state.end && state.end.winner === seat;
    const clock = el("span", { class: "clock", dataset: { seat: String(seat) } });
    const bank = el("span", { class: "bank", dataset: { seat: String(seat) } });
    return el("div", {
      class: ["player", `seat-${seat}`, toMove === seat && "to-move", won && "winner"]
        .filter(Boolean).join(" "),
      dataset: { seat: String(seat), player: name },
    },
    el("span", { class: `chip p${seat}`, "aria-hidden": "true" }),
    el("div", { class: "who" },
      el("span", { class: "name" }, name, won ? el("span", { class: "crown", title: "winner" }, " ★") : null,
        name === state.you ? el("span", { class: "you muted" }, " (you)") : null),
      rating),
    el("div", { class: "clocks" }, clock, bank));
  });
  view.players.replaceChildren(...cards);
  tickClocks();
}

/** A finished match's clocks show each player's total thinking time instead. */
function showThinkTotals() {
  for (const seat of [0, 1]) {
    const total = state.thinkMs.reduce((sum, ms, ply) => sum + ((state.movers[ply] === seat && ms) || 0), 0);
    const clock = view.players.querySelector(`.clock[data-seat="${seat}"]`);
    clock.textContent = formatThink(total) || "–";
    clock.title = "total thinking time";
    clock.classList.add("total");
    view.players.querySelector(`.bank[data-seat="${seat}"]`).textContent = "thought";
  }
}

function tickClocks() {
  if (!state.game) return;
  if (!isLive()) {
    showThinkTotals();
    return;
  }
  for (const seat of [0, 1]) {
    const { left, bank } = clockNow(seat);
    const clock = view.players.querySelector(`.clock[data-seat="${seat}"]`);
    const bankNode = view.players.querySelector(`.bank[data-seat="${seat}"]`);
    if (!clock) continue;
    clock.textContent = formatClock(left);
    clock.classList.toggle("low", isLive() && left < Math.min(2000, state.timeControl.move_ms * 0.25));
    bankNode.textContent = state.timeControl.bank_ms ? `bank ${formatClock(bank)}` : "";
  }
}

function renderResult() {
  if (!state.end) {
    view.result.hidden = true;
    return;
  }
  view.result.hidden = false;
  const winner = state.end.winner;
  view.result.className = `result ${winner === 0 || winner === 1 ? `won p${winner}` : "drawn"}`;
  view.result.dataset.result = state.end.result ?? "";
  view.result.replaceChildren(
    el("strong", {}, state.end.result === "*" ? "Aborted" : state.end.result ?? ""),
    el("span", {}, describeResult(state.end, state.players, state.game.name)));
}

function renderMoveList() {
  const current = shownPly();
  const items = state.moves.map((move, ply) => {
    const mover = state.movers[ply] ?? ply % 2;
    const blunder = state.solved.get(ply)?.blunder ? blunderTitle(state.solved.get(ply)) : null;
    const thought = state.thinkMs[ply] === undefined || state.thinkMs[ply] === null
      ? null
      : `thought ${formatThink(state.thinkMs[ply])}`;
    const button = el("button", {
      type: "button",
      class: `move p${mover}${ply + 1 === current ? " current" : ""}${blunder ? " blunder" : ""}`,
      dataset: { ply: String(ply + 1) },
      "aria-current": ply + 1 === current ? "step" : null,
      title: [blunder, thought].filter(Boolean).join("; ") || null,
    },
    el("span", { class: `chip small p${mover}`, "aria-hidden": "true" }),
    el("span", { class: "move-name" }, state.game.formatMove(move)),
    blunder ? el("span", { class: "blunder-mark", "aria-label": blunder }, "??") : null,
    el("span", { class: "think" }, formatThink(state.thinkMs[ply])),
    state.analyses[ply] ? el("span", { class: "has-analysis", title: "search statistics" }, "◆") : null);
    button.addEventListener("click", () => goTo(ply + 1));
    return el("li", {}, button);
  });
  view.moves.replaceChildren(...items);
  view.moveCount.textContent = state.moves.length ? `${state.moves.length}` : "";
  const currentButton = view.moves.querySelector(".current");
  if (currentButton && state.cursor === null) currentButton.scrollIntoView({ block: "nearest" });
}

function renderReplayControls() {
  const ply = shownPly();
  const total = state.moves.length;
  view.slider.max = String(total);
  view.slider.value = String(ply);
  view.slider.setAttribute("aria-valuetext", `after move ${ply} of ${total}`);
  view.ply.textContent = `${ply} / ${total}`;
  $("first").disabled = ply === 0;
  $("prev").disabled = ply === 0;
  $("next").disabled = ply >= total;
  $("last").disabled = ply >= total;
  view.follow.hidden = !(isLive() && state.cursor !== null);
}

/** The solved value of the shown position for its side to move, when analysed. */
function renderSolved() {
  const ply = shownPly();
  const value = state.solved.size ? positionValue(state.solved, ply) : null;
  view.solved.hidden = value === null;
  if (value === null) return;
  const { text, detail } = describeValue(value, ply);
  const toMove = state.game.sideToMove(state.positions[ply]);
  view.solved.dataset.value = text;
  view.solved.replaceChildren(
    el("span", { class: "solved-label" }, "Solved:"), " ",
    el("span", { class: `chip small p${toMove}`, "aria-hidden": "true" }),
    `${state.players[toMove]} to move: `,
    el("strong", { class: "solved-value" }, text),
    el("span", { class: "muted" }, ` (${detail})`));
}

function renderTelemetry() {
  const ply = shownPly();
  if (ply === 0) {
    view.telemetry.clear(isLive() ? "Waiting for the first move…" : "Start position.");
    return;
  }
  const mover = state.movers[ply - 1] ?? (ply - 1) % 2;
  const analysis = state.analyses[ply - 1] ?? null;
  if (!analysis && !isLive()) {
    view.telemetry.clear(`${state.players[mover]} reported no search statistics with move ${ply}.`);
    return;
  }
  view.telemetry.show({
    analysis,
    mover,
    playerName: state.players[mover],
    ply: ply - 1,
    played: state.moves[ply - 1],
    formatMove: state.game.formatMove,
    solved: state.solved.get(ply - 1) ?? null,
  });
}

/** The search tree the shown move's bot reported, when it sent one. */
function renderTree() {
  const ply = shownPly();
  const analysis = ply > 0 ? state.analyses[ply - 1] : null;
  view.tree.hidden = !analysis?.tree?.length;
  if (view.tree.hidden) {
    view.treeDiagram.replaceChildren();
    return;
  }
  const mover = state.movers[ply - 1] ?? (ply - 1) % 2;
  view.treeDiagram.replaceChildren(treeDiagram(analysis.tree, {
    mover,
    formatMove: state.game.formatMove,
    width: view.treeDiagram.clientWidth || 340,
    label: `${state.players[mover]}'s search tree for move ${ply}`,
  }));
}

/** The evaluation graph over all moves: hidden until a value or a solved value is known. */
function renderGraph() {
  const points = graphPoints({
    analyses: state.analyses,
    movers: state.moves.map((_, ply) => state.movers[ply] ?? ply % 2),
    solvedAfter: (ply) => state.solved.get(ply)?.outcome_after ?? null,
  });
  const shown = points.bots[0].length + points.bots[1].length + points.solved.length > 0;
  view.eval.hidden = !shown;
  if (!shown) {
    view.evalGraph.replaceChildren();
    return;
  }
  view.evalLegend.textContent = points.solved.length
    ? `first player's side; dashed: solved`
    : `first player's side`;
  view.evalGraph.replaceChildren(evalGraph(points, {
    moves: state.moves.length,
    current: shownPly(),
    onPick: (ply) => goTo(ply),
    names: state.players,
    width: view.evalGraph.clientWidth || 600,
    label: `Each bot's value of the position over the moves${points.solved.length ? ", and the solved value" : ""}`,
  }));
}

function render({ animate }) {
  if (!state.game) return;
  const ply = shownPly();
  const mover = ply > 0 ? state.movers[ply - 1] ?? (ply - 1) % 2 : 0;
  state.board.update({
    position: state.positions[ply],
    lastMove: ply > 0 ? state.moves[ply - 1] : null,
    stats: ply > 0 ? candidateStats(state.analyses[ply - 1], mover) : null,
    animate,
  });
  view.root.dataset.status = state.status;
  view.root.dataset.ply = String(ply);
  view.root.dataset.moves = String(state.moves.length);
  renderPlayers();
  renderResult();
  renderMoveList();
  renderReplayControls();
  renderSolved();
  renderTelemetry();
  renderTree();
  renderGraph();
}

// ---------------------------------------------------------------------------
// Replay controls

function goTo(ply) {
  const total = state.moves.length;
  const target = Math.max(0, Math.min(total, ply));
  const before = shownPly();
  // Reaching the newest move of a live match means following it again.
  state.cursor = isLive() && target === total ? null : target;
  render({ animate: target === before + 1 });
}

$("first").addEventListener("click", () => goTo(0));
$("prev").addEventListener("click", () => goTo(shownPly() - 1));
$("next").addEventListener("click", () => goTo(shownPly() + 1));
$("last").addEventListener("click", () => goTo(state.moves.length));
view.follow.addEventListener("click", () => goTo(state.moves.length));
view.slider.addEventListener("input", () => goTo(Number(view.slider.value)));
document.addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLInputElement && event.target !== view.slider) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const actions = {
    ArrowLeft: () => goTo(shownPly() - 1),
    ArrowRight: () => goTo(shownPly() + 1),
    Home: () => goTo(0),
    End: () => goTo(state.moves.length),
  };
  const action = actions[event.key];
  if (action && event.target !== view.slider) {
    event.preventDefault();
    action();
  }
});

// Clocks tick locally between server reports; a tenth of a second is what they show.
setInterval(() => {
  if (isLive()) tickClocks();
}, 100);

/** Show match `matchId`: its record, then (while it is live) its live feed. */
export function openMatch(matchId) {
  state.matchId = matchId;
  return loadFromRecord();
}

/**
 * Follow match `matchId`, just started, from its live feed alone: its stored row may
 * not be written yet (it goes with the store's next group commit). `you` names the
 * player the page belongs to (a guest).
 */
export function openLive(matchId, { you = null } = {}) {
  state.matchId = matchId;
  state.you = you;
  state.status = "live";
  follow();
}

if (location.pathname.startsWith("/play/")) {
  import("./play.js");
} else {
  openMatch(decodeURIComponent(location.pathname.split("/").filter(Boolean).at(-1) ?? ""));
}
