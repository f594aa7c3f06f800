// A Connect Four bot for MCTS Arena, written from docs/protocol.md alone.
// One-ply greedy: win now if it can, else block the opponent's win, never drop a
// disc that lets the opponent win on top of it, and prefer central columns.
//
//   ARENA_BOT_TOKEN=... node bot.js --name js-bot [--url ws://127.0.0.1:8765/]
//        [--games N] [--move-ms 1000]
import WebSocket from "ws";

const ROWS = 6;
const COLUMNS = 7;

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

const url = option("url", "ws://127.0.0.1:8765/");
const name = option("name", process.env.ARENA_BOT_NAME);
const token = process.env.ARENA_BOT_TOKEN;
const games = Number(option("games", "Infinity"));
const moveMs = Number(option("move-ms", "1000"));
if (!name || !token) {
  console.error("usage: ARENA_BOT_TOKEN=... node bot.js --name NAME [--url URL] [--games N]");
  process.exit(2);
}

// A position is six rows top to bottom joined by "/", then the side to move:
// board[row][column], row 0 at the top; "." empty, "x" player 0, "o" player 1.
function parse(position) {
  const [rows, side] = position.split(" ");
  return { board: rows.split("/").map((row) => row.split("")), side };
}

function drop(board, column, symbol) {
  for (let row = ROWS - 1; row >= 0; row -= 1) {
    if (board[row][column] === ".") {
      board[row][column] = symbol;
      return row;
    }
  }
  return -1;
}

function wins(board, row, column, symbol) {
  for (const [dr, dc] of [[0, 1], [1, 0], [1, 1], [1, -1]]) {
    let run = 1;
    for (const sign of [1, -1]) {
      let r = row + sign * dr;
      let c = column + sign * dc;
      while (r >= 0 && r < ROWS && c >= 0 && c < COLUMNS && board[r][c] === symbol) {
        run += 1;
        r += sign * dr;
        c += sign * dc;
      }
    }
    if (run >= 4) return true;
  }
  return false;
}

let nodes = 0; // positions looked at for the current move, reported as `analysis.nodes`

/** True when `symbol` would complete four by playing `column` on `board`. */
function winningDrop(board, column, symbol) {
  nodes += 1;
  const copy = board.map((row) => [...row]);
  const row = drop(copy, column, symbol);
  return row >= 0 && wins(copy, row, column, symbol);
}

/** The move for `position` among `legal`. */
function choose(position, legal) {
  const { board, side } = parse(position);
  const other = side === "x" ? "o" : "x";
  const score = (column) => {
    if (winningDrop(board, column, side)) return 1000;
    if (winningDrop(board, column, other)) return 500;
    const after = board.map((row) => [...row]);
    drop(after, column, side);
    const givesWin = legal.some((reply) => winningDrop(after, reply, other));
    return (givesWin ? -100 : 0) - Math.abs(column - 3);
  };
  const scored = legal.map((column) => [score(column), column]);
  scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  return scored[0][1];
}

const socket = new WebSocket(url);
const send = (message) => socket.send(JSON.stringify(message));
let played = 0;
let exitCode = 1;
const ratingsDue = new Set(); // rated matches whose `rating` report has not come yet
let finishing = false;

/** Close once the last rated match's rating has come (or after 5 s without it). */
function finish() {
  exitCode = 0;
  finishing = true;
  if (ratingsDue.size === 0) socket.close(1000);
  else setTimeout(() => socket.close(1000), 5000);
}

socket.on("open", () => send({ type: "hello", role: "bot", version: 1, name, token }));
socket.on("message", (data) => {
  const message = JSON.parse(data.toString());
  switch (message.type) {
    case "welcome":
      console.log(`logged in as ${message.name} on ${message.server}`);
      send({ type: "seek", game: "connect4", time_control: { move_ms: moveMs, bank_ms: 0 } });
      break;
    case "your_turn": {
      nodes = 0;
      const move = choose(message.position, message.legal_moves);
      send({
        type: "move", match_id: message.match_id, ply: message.ply, move,
        analysis: { nodes, depth: 1 },
      });
      break;
    }
    case "match_end":
      played += 1;
      console.log(`match ${message.match_id}: ${message.result} (${message.termination}) ${message.reason}`);
      if (message.rated) ratingsDue.add(message.match_id);
      if (played >= games) {
        finish();
      } else {
        send({ type: "seek", game: "connect4", time_control: { move_ms: moveMs, bank_ms: 0 } });
      }
      break;
    case "rating": { // after a rated match's refit: our row of the leaderboard
      ratingsDue.delete(message.match_id);
      const row = message.entries.find((entry) => entry.bot === name);
      if (row) {
        console.log(`match ${message.match_id}: rating ${row.rating.toFixed(1)} ± ${row.ci95.toFixed(1)}`
          + `${row.provisional ? " provisional" : ""}, rank ${row.rank}, ${row.games} rated games`);
      }
      if (finishing && ratingsDue.size === 0) socket.close(1000);
      break;
    }
    case "challenge": // this bot only seeks
      send({ type: "decline", challenge_id: message.challenge_id });
      break;
    case "error":
      console.error(`server error ${message.code}: ${message.message}`);
      if (["auth_failed", "unsupported_version", "replaced"].includes(message.code)) exitCode = 3;
      break;
    default: // match_start, moved, challenge...: nothing to do for this bot
  }
});
socket.on("close", () => process.exit(exitCode));
socket.on("error", (error) => {
  console.error(`cannot talk to ${url}: ${error.message}`);
  process.exit(1);
});
