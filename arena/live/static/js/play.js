// The play page (/play/<bot>?game=NAME): a person plays a bot as a guest.
//
// It is the match page (match.js: board, clocks, the bot's search statistics,
// moves, result, replay) plus a guest connection of its own: `hello` with
// role "guest" (no account, no token; the server names the guest), then a
// `challenge` to the bot. The bot accepts or declines; once the match starts,
// the match page follows it as any spectator does, and this module answers
// each `your_turn` with the move the person clicks (on the board, or on the
// buttons of the legal moves). The match is unrated. At the end, the page
// stays on the finished game, ready to replay, with a link to its permanent
// page (/matches/<id>).

import { PROTOCOL_VERSION, fetchJSON, socketURL } from "./api.js";
import { gameFor } from "./boards/index.js";
import { el } from "./dom.js";
import { openLive } from "./match.js";

/** A person's time per move, the most a guest game may have (the server caps it). */
const GUEST_MOVE_MS = 60000;

const $ = (id) => document.getElementById(id);

// The match page's markup serves this page too: switch it to playing.
document.body.classList.add("page-play");
document.body.dataset.mode = "play";
$("match-title").textContent = "Play";
$("play").hidden = false;

const view = {
  root: $("play"),
  bot: $("play-bot"),
  status: $("play-status"),
  moves: $("play-moves"),
  resign: $("resign"),
  replay: $("replay-link"),
  again: $("again"),
  board: $("board"),
};

const play = {
  bot: decodeURIComponent(location.pathname.split("/").filter(Boolean).at(-1) ?? ""),
  game: null, // the game object (boards/index.js)
  ws: null,
  guest: null, // the name the server gave us
  matchId: null,
  seat: null,
  turn: null, // the your_turn waiting for our move
  over: false,
};

function setState(name, text) {
  view.root.dataset.state = name;
  view.status.textContent = text;
}

function send(message) {
  if (play.ws && play.ws.readyState === WebSocket.OPEN) play.ws.send(JSON.stringify(message));
}

/** The move a click on the board means (a Connect Four cell stands for its column). */
function moveOfCell(cell) {
  return play.game.moveOfCell ? play.game.moveOfCell(cell) : cell;
}

function renderMoves() {
  const legal = play.turn ? play.turn.legal_moves : [];
  view.moves.replaceChildren(...legal.map((move) => {
    const button = el("button", { type: "button", class: "play-move", dataset: { move: String(move) } },
      play.game.formatMove(move));
    button.addEventListener("click", () => playMove(move));
    return button;
  }));
  view.board.classList.toggle("your-turn", Boolean(play.turn));
}

function playMove(move) {
  const turn = play.turn;
  if (!turn || !turn.legal_moves.includes(move)) return;
  play.turn = null;
  send({ type: "move", match_id: turn.match_id, ply: turn.ply, move });
  setState("waiting", `You played ${play.game.formatMove(move)}. ${play.bot} is thinking…`);
  renderMoves();
}

function describeEnd(end) {
  if (end.result === "*") return `The game was aborted: ${end.reason}.`;
  if (end.winner === null) return `A draw (${end.result}).`;
  const verdict = end.winner === play.seat ? "You won" : `${play.bot} won`;
  return `${verdict} (${end.result}, ${end.termination.replace("_", " ")}).`;
}

function onMessage(data) {
  switch (data.type) {
    case "welcome":
      play.guest = data.name;
      setState("challenging", `Asking ${play.bot} for a game…`);
      send({
        type: "challenge",
        opponent: play.bot,
        game: play.game.name,
        time_control: { move_ms: GUEST_MOVE_MS, bank_ms: 0 },
        id: "play",
      });
      break;
    case "declined":
      setState("declined", `${play.bot} declined: it is busy with other games. Try again in a moment.`);
      showAgain();
      play.ws.close(1000, "declined");
      break;
    case "match_start":
      play.matchId = data.match_id;
      play.seat = data.you;
      view.resign.hidden = false;
      setState("playing", `You play ${data.you === 0 ? "first" : "second"}, unrated. ` +
        (data.you === 0 ? "Your move." : `${play.bot} is thinking…`));
      openLive(data.match_id, { you: play.guest });
      break;
    case "your_turn":
      play.turn = data;
      setState("your-turn", "Your move: click the board or a move below.");
      renderMoves();
      break;
    case "match_end":
      play.over = true;
      play.turn = null;
      renderMoves();
      view.resign.hidden = true;
      setState("over", describeEnd(data));
      view.replay.href = `/matches/${encodeURIComponent(data.match_id)}`;
      view.replay.hidden = false;
      showAgain();
      play.ws.close(1000, "game over");
      break;
    case "error":
      if (data.ref === "play" || !play.matchId) {
        setState("refused", `Cannot play ${play.bot}: ${data.message}.`);
        showAgain();
      } else {
        view.status.textContent = `The server refused that: ${data.message}.`;
      }
      break;
    default:
      break; // moved: the match page draws it from its own feed
  }
}

function showAgain() {
  view.again.href = `${location.pathname}?game=${encodeURIComponent(play.game.name)}`;
  view.again.hidden = false;
}

function connect() {
  const ws = new WebSocket(socketURL());
  play.ws = ws;
  ws.addEventListener("open", () => send({ type: "hello", role: "guest", version: PROTOCOL_VERSION }));
  ws.addEventListener("message", (message) => {
    try {
      onMessage(JSON.parse(message.data));
    } catch (error) {
      console.warn("bad message from the server", error);
    }
  });
  ws.addEventListener("close", () => {
    if (play.matchId && !play.over) {
      setState("disconnected", "The connection was lost: the game counts as left.");
      play.turn = null;
      renderMoves();
    }
  });
}

view.board.addEventListener("click", (event) => {
  const cell = event.target.closest?.("[data-cell]");
  if (cell) playMove(moveOfCell(Number(cell.getAttribute("data-cell"))));
});

view.resign.addEventListener("click", () => {
  if (play.matchId && !play.over) send({ type: "resign", match_id: play.matchId });
});

async function start() {
  view.bot.textContent = play.bot;
  document.title = `Play ${play.bot} · MCTS Arena`;
  let bots = [];
  try {
    bots = (await fetchJSON("/api/play")).bots ?? [];
  } catch (error) {
    setState("refused", `The arena is not answering: ${error.message}.`);
    return;
  }
  const entry = bots.find((row) => row.bot === play.bot);
  if (!entry) {
    setState("refused", `${play.bot} is not online, or does not accept guests.`);
    return;
  }
  const wanted = new URLSearchParams(location.search).get("game") ?? entry.games[0];
  if (!entry.games.includes(wanted)) {
    setState("refused", `${play.bot} accepts guests in ${entry.games.join(", ")}, not ${wanted}.`);
    return;
  }
  try {
    play.game = gameFor(wanted);
  } catch (error) {
    setState("refused", error.message);
    return;
  }
  connect();
}

start();
