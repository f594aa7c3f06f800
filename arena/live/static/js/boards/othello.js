// Othello: replaying moves and the SVG board.
//
// Position text (protocol/games/othello.py): eight rows of eight cells, top
// first, joined by "/", a space, the side to move ("x" is Black and moves first).
// A move is OpenSpiel's action id: a cell 0-63, row-major from the top-left
// (a1 = 0, h1 = 7, a8 = 56), or 64 = pass. The side to move's legal cells are
// dotted; telemetry shades candidate cells by visit share.

import { SYMBOLS, drawCandidateShading, sideOf, svg, svgRoot } from "./common.js";

const N = 8;
const PASS = 64;
const CELL = 50;
const PAD = 22;
const SIZE = N * CELL + 2 * PAD;
const DIRECTIONS = [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 1], [1, -1], [1, 0], [1, 1]];

function parse(position) {
  const [rows, side] = position.split(" ");
  return { cells: rows.split("/").join("").split(""), side };
}

/** The cells `side` turns over by placing on `move` (empty when the placement is illegal). */
function flipsOf(cells, side, move) {
  if (cells[move] !== ".") return [];
  const other = side === "x" ? "o" : "x";
  const row = Math.floor(move / N);
  const col = move % N;
  const turned = [];
  for (const [dr, dc] of DIRECTIONS) {
    const run = [];
    let r = row + dr;
    let c = col + dc;
    while (r >= 0 && r < N && c >= 0 && c < N && cells[r * N + c] === other) {
      run.push(r * N + c);
      r += dr;
      c += dc;
    }
    if (run.length && r >= 0 && r < N && c >= 0 && c < N && cells[r * N + c] === side) {
      turned.push(...run);
    }
  }
  return turned;
}

/** The cells the side to move may place on (none: it must pass, or the game is over). */
function placements(cells, side) {
  const found = [];
  for (let move = 0; move < N * N; move += 1) {
    if (flipsOf(cells, side, move).length) found.push(move);
  }
  return found;
}

function applyMove(position, move) {
  const { cells, side } = parse(position);
  const next = side === "x" ? "o" : "x";
  if (move === PASS) {
    if (placements(cells, side).length) throw new Error("othello: a pass with a placement open");
  } else {
    const turned = Number.isInteger(move) ? flipsOf(cells, side, move) : [];
    if (!turned.length) throw new Error(`othello: cell ${move} is not a legal placement`);
    cells[move] = side;
    for (const cell of turned) cells[cell] = side;
  }
  const rows = [];
  for (let r = 0; r < N; r += 1) rows.push(cells.slice(r * N, r * N + N).join(""));
  return `${rows.join("/")} ${next}`;
}

/** Othello has no winning line: the game is won on the disc count. */
function winningCells() {
  return [];
}

function formatMove(move) {
  if (move === PASS) return "pass";
  return `${"abcdefgh"[move % N]}${Math.floor(move / N) + 1}`;
}

function cellRect(move) {
  if (move < 0 || move >= N * N) return null;
  return { x: PAD + (move % N) * CELL, y: PAD + Math.floor(move / N) * CELL, size: CELL };
}

function createBoard(container, { mini = false } = {}) {
  const root = svgRoot(SIZE, SIZE, "Othello board", `board board-othello${mini ? " mini" : ""}`);
  svg("rect", { x: 0, y: 0, width: SIZE, height: SIZE, rx: 14, class: "ttt-surface" }, root);
  svg("rect", {
    x: PAD, y: PAD, width: N * CELL, height: N * CELL, fill: "#2e7d4f",
  }, root);
  const shading = svg("g", { class: "candidates" }, root);
  const grid = svg("g", { class: "grid", stroke: "#173f28", "stroke-width": 1.5 }, root);
  for (let k = 0; k <= N; k += 1) {
    svg("line", { x1: PAD + k * CELL, y1: PAD, x2: PAD + k * CELL, y2: PAD + N * CELL }, grid);
    svg("line", { x1: PAD, y1: PAD + k * CELL, x2: PAD + N * CELL, y2: PAD + k * CELL }, grid);
  }
  if (!mini) {
    const labels = svg("g", { class: "coordinates", "font-size": 13, "text-anchor": "middle" }, root);
    for (let k = 0; k < N; k += 1) {
      svg("text", { x: PAD + k * CELL + CELL / 2, y: PAD - 7, fill: "currentColor" }, labels)
        .textContent = "abcdefgh"[k];
      svg("text", { x: PAD / 2, y: PAD + k * CELL + CELL / 2 + 5, fill: "currentColor" }, labels)
        .textContent = String(k + 1);
    }
  }
  const cellsLayer = svg("g", { class: "cells" }, root);
  const cellNodes = [];
  for (let i = 0; i < N * N; i += 1) {
    const { x, y } = cellRect(i);
    const node = svg("g", {
      class: "cell", "data-cell": i, "data-piece": "", transform: `translate(${x} ${y})`,
    }, cellsLayer);
    // A transparent square so the whole cell takes clicks in browser play.
    svg("rect", { x: 0, y: 0, width: CELL, height: CELL, fill: "transparent" }, node);
    cellNodes.push(node);
  }
  container.replaceChildren(root);
  let shown = null;

  return {
    element: root,
    update({ position, lastMove = null, stats = null }) {
      const { cells, side } = parse(position);
      const open = new Set(placements(cells, side));
      cells.forEach((symbol, index) => {
        const node = cellNodes[index];
        const piece = symbol === "." ? (open.has(index) ? "hint" : "") : symbol;
        if (node.getAttribute("data-piece") !== piece) {
          node.querySelector(".disc")?.remove();
          if (piece === "hint") {
            svg("circle", {
              class: "disc", cx: CELL / 2, cy: CELL / 2, r: CELL * 0.08, fill: "#173f28",
            }, node);
          } else if (piece) {
            svg("circle", {
              class: "disc",
              cx: CELL / 2,
              cy: CELL / 2,
              r: CELL * 0.4,
              fill: piece === "x" ? "#151515" : "#f5f5f0",
            }, node);
          }
          node.setAttribute("data-piece", piece);
        }
        node.setAttribute("class", [
          "cell",
          piece && piece !== "hint" && `piece p${SYMBOLS.indexOf(piece)}`,
          index === lastMove && "last",
        ].filter(Boolean).join(" "));
        const disc = node.querySelector(".disc");
        if (disc && piece !== "hint") {
          // The disc just placed is ringed; every other keeps its plain edge.
          disc.setAttribute("stroke-width", index === lastMove ? 4 : 1);
          disc.setAttribute("stroke", index === lastMove ? "#e5484d" : piece === "x" ? "#000" : "#999");
        }
      });
      drawCandidateShading(shading, mini ? null : stats, cellRect, {
        occupied: (move) => move !== PASS && cells[move] !== ".",
      });
      const black = cells.filter((c) => c === "x").length;
      const white = cells.filter((c) => c === "o").length;
      root.setAttribute(
        "aria-label",
        `Othello board, ${side === "x" ? "Black" : "White"} to move, Black ${black} White ${white}`,
      );
      shown = position;
    },
    get position() {
      return shown;
    },
  };
}

export const othello = {
  name: "othello",
  title: "Othello",
  initialPosition: "......../......../......../...ox.../...xo.../......../......../........ x",
  applyMove,
  sideToMove: sideOf,
  winningCells,
  formatMove,
  createBoard,
};
