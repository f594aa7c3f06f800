// Connect Four: rules just deep enough to replay moves, and the SVG board.
//
// Position text (protocol/games/connect4.py): six rows top to bottom joined by
// "/", seven cells each ("." empty, "x" player 0, "o" player 1), a space, the
// side to move. A move is a column 0-6; the disc falls to the lowest empty row.
// Telemetry: a bar above each column, its height the column's share of the
// searcher's visits, labelled with that share and the move's value.

import { SYMBOLS, percent, sideOf, signed, svg, svgRoot } from "./common.js";

const COLUMNS = 7;
const ROWS = 6;
const CELL = 100;
const PAD = 12;
const BARS = 132; // height of the telemetry strip above the board
const LABELS = 34; // column numbers under the board
const WIDTH = COLUMNS * CELL + 2 * PAD;
const BOARD_TOP = BARS;
const HEIGHT = BARS + ROWS * CELL + 2 * PAD + LABELS;

function parse(position) {
  const [rows, side] = position.split(" ");
  return { cells: rows.split("/").join("").split(""), side };
}

function applyMove(position, move) {
  const { cells, side } = parse(position);
  if (!Number.isInteger(move) || move < 0 || move >= COLUMNS) {
    throw new Error(`connect4: no column ${move}`);
  }
  for (let row = ROWS - 1; row >= 0; row -= 1) {
    const index = row * COLUMNS + move;
    if (cells[index] === ".") {
      cells[index] = side;
      const rows = [];
      for (let r = 0; r < ROWS; r += 1) rows.push(cells.slice(r * COLUMNS, (r + 1) * COLUMNS).join(""));
      return `${rows.join("/")} ${side === "x" ? "o" : "x"}`;
    }
  }
  throw new Error(`connect4: column ${move} is full`);
}

/** Cells (row-major indices, row 0 at the top) of a four-in-a-row, or []. */
function winningCells(position) {
  const { cells } = parse(position);
  const at = (r, c) => (r >= 0 && r < ROWS && c >= 0 && c < COLUMNS ? cells[r * COLUMNS + c] : ".");
  const found = new Set();
  for (let r = 0; r < ROWS; r += 1) {
    for (let c = 0; c < COLUMNS; c += 1) {
      const symbol = at(r, c);
      if (symbol === ".") continue;
      for (const [dr, dc] of [[0, 1], [1, 0], [1, 1], [1, -1]]) {
        let length = 1;
        while (at(r + dr * length, c + dc * length) === symbol) length += 1;
        if (length >= 4) {
          for (let k = 0; k < length; k += 1) found.add((r + dr * k) * COLUMNS + c + dc * k);
        }
      }
    }
  }
  return [...found];
}

/** The row a move into `column` landed on, given the position after it (topmost disc). */
function landingRow(cells, column) {
  for (let r = 0; r < ROWS; r += 1) if (cells[r * COLUMNS + column] !== ".") return r;
  return -1;
}

function createBoard(container, { mini = false } = {}) {
  const top = mini ? 0 : BOARD_TOP;
  const height = mini ? ROWS * CELL + 2 * PAD : HEIGHT;
  const root = svgRoot(WIDTH, height, "Connect Four board", `board board-connect4${mini ? " mini" : ""}`);
  const bars = svg("g", { class: "bars" }, root);
  const frame = svg("g", { class: "frame" }, root);
  svg("rect", {
    x: 0, y: top, width: WIDTH, height: ROWS * CELL + 2 * PAD, rx: 22, class: "c4-frame",
  }, frame);
  const discs = [];
  for (let r = 0; r < ROWS; r += 1) {
    for (let c = 0; c < COLUMNS; c += 1) {
      const disc = svg("circle", {
        cx: PAD + c * CELL + CELL / 2,
        cy: top + PAD + r * CELL + CELL / 2,
        r: CELL * 0.4,
        class: "c4-hole",
        "data-cell": r * COLUMNS + c,
        "data-piece": "",
      }, frame);
      discs.push(disc);
    }
  }
  if (!mini) {
    for (let c = 0; c < COLUMNS; c += 1) {
      const label = svg("text", {
        x: PAD + c * CELL + CELL / 2, y: height - 8, class: "axis-label",
      }, root);
      label.textContent = String(c);
    }
  }
  container.replaceChildren(root);
  let shown = null;

  function drawBars(stats) {
    bars.replaceChildren();
    if (!stats || mini) return;
    bars.setAttribute("class", `bars mover-${stats.mover ?? 0}`);
    const baseline = BOARD_TOP - 8;
    const tallest = BARS - 52;
    for (const [move, stat] of stats.moves) {
      if (move < 0 || move >= COLUMNS) continue;
      const x = PAD + move * CELL;
      const barHeight = Math.max(2, (stats.maxShare > 0 ? stat.share / stats.maxShare : 0) * tallest);
      const group = svg("g", {
        class: `bar${stat.rank === 0 ? " best" : ""}`,
        "data-move": move,
        "data-share": stat.share.toFixed(4),
        "data-visits": stat.visits,
      }, bars);
      svg("rect", {
        x: x + 18, y: baseline - barHeight, width: CELL - 36, height: barHeight, rx: 6, class: "bar-fill",
      }, group);
      const share = svg("text", { x: x + CELL / 2, y: baseline - barHeight - 24, class: "bar-share" }, group);
      share.textContent = percent(stat.share);
      if (stat.value !== null) {
        const value = svg("text", {
          x: x + CELL / 2, y: baseline - barHeight - 6, class: "bar-value",
        }, group);
        value.textContent = signed(stat.value);
      }
      const title = svg("title", {}, group);
      title.textContent = `column ${move}: ${stat.visits} visits (${percent(stat.share)})` +
        (stat.value === null ? "" : `, value ${signed(stat.value)}`);
    }
  }

  return {
    element: root,
    /** Show `position`; `lastMove` rings the disc just dropped; `stats` draws the bars. */
    update({ position, lastMove = null, stats = null, animate = false }) {
      const { cells } = parse(position);
      const winners = new Set(winningCells(position));
      const landed = lastMove === null ? -1 : landingRow(cells, lastMove) * COLUMNS + lastMove;
      cells.forEach((symbol, index) => {
        const disc = discs[index];
        const piece = symbol === "." ? "" : symbol;
        const wasEmpty = disc.getAttribute("data-piece") === "";
        disc.setAttribute("data-piece", piece);
        disc.setAttribute("class", [
          "c4-hole",
          piece && `piece p${SYMBOLS.indexOf(piece)}`,
          index === landed && "last",
          winners.has(index) && "win",
        ].filter(Boolean).join(" "));
        if (animate && piece && wasEmpty && index === landed) {
          const row = Math.floor(index / COLUMNS);
          disc.style.setProperty("--drop", `${-(row + 1) * CELL - PAD}px`);
          disc.classList.add("dropping");
          disc.addEventListener("animationend", () => disc.classList.remove("dropping"), { once: true });
        }
      });
      drawBars(stats);
      root.setAttribute("aria-label", `Connect Four board, ${parse(position).side} to move`);
      shown = position;
    },
    get position() {
      return shown;
    },
  };
}

export const connect4 = {
  name: "connect4",
  title: "Connect Four",
  initialPosition: `${Array(ROWS).fill(".".repeat(COLUMNS)).join("/")} x`,
  applyMove,
  sideToMove: sideOf,
  winningCells,
  formatMove: (move) => `col ${move}`,
  moveOfCell: (cell) => cell % COLUMNS,
  createBoard,
};
