// Tic-tac-toe: replaying moves and the SVG board.
//
// Position text (protocol/games/tictactoe.py): three rows of three cells joined
// by "/", a space, the side to move. A move is a cell 0-8, row-major.
// Telemetry: candidate cells are shaded in the searcher's colour by visit share,
// labelled with the share and the move's value.

import { SYMBOLS, drawCandidateShading, drawMark, lineOf, sideOf, svg, svgRoot } from "./common.js";

const CELL = 100;
const PAD = 10;
const SIZE = 3 * CELL + 2 * PAD;

function parse(position) {
  const [rows, side] = position.split(" ");
  return { cells: rows.split("/").join("").split(""), side };
}

function applyMove(position, move) {
  const { cells, side } = parse(position);
  if (!Number.isInteger(move) || move < 0 || move > 8 || cells[move] !== ".") {
    throw new Error(`tictactoe: cell ${move} is not free`);
  }
  cells[move] = side;
  const rows = [0, 3, 6].map((start) => cells.slice(start, start + 3).join(""));
  return `${rows.join("/")} ${side === "x" ? "o" : "x"}`;
}

function winningCells(position) {
  const { cells } = parse(position);
  return lineOf(cells, "x") ?? lineOf(cells, "o") ?? [];
}

function cellRect(move) {
  if (move < 0 || move > 8) return null;
  return { x: PAD + (move % 3) * CELL, y: PAD + Math.floor(move / 3) * CELL, size: CELL };
}

function createBoard(container, { mini = false } = {}) {
  const root = svgRoot(SIZE, SIZE, "Tic-tac-toe board", `board board-tictactoe${mini ? " mini" : ""}`);
  svg("rect", { x: 0, y: 0, width: SIZE, height: SIZE, rx: 16, class: "ttt-surface" }, root);
  const shading = svg("g", { class: "candidates" }, root);
  const grid = svg("g", { class: "grid" }, root);
  for (const k of [1, 2]) {
    svg("line", { x1: PAD + k * CELL, y1: PAD + 8, x2: PAD + k * CELL, y2: SIZE - PAD - 8 }, grid);
    svg("line", { x1: PAD + 8, y1: PAD + k * CELL, x2: SIZE - PAD - 8, y2: PAD + k * CELL }, grid);
  }
  const cellsLayer = svg("g", { class: "cells" }, root);
  const winLayer = svg("g", { class: "win-layer" }, root);
  const cellNodes = [];
  for (let i = 0; i < 9; i += 1) {
    const { x, y } = cellRect(i);
    cellNodes.push(svg("g", {
      class: "cell", "data-cell": i, "data-piece": "", transform: `translate(${x} ${y})`,
    }, cellsLayer));
  }
  container.replaceChildren(root);
  let shown = null;

  return {
    element: root,
    update({ position, lastMove = null, stats = null }) {
      const { cells, side } = parse(position);
      const winners = new Set(winningCells(position));
      cells.forEach((symbol, index) => {
        const node = cellNodes[index];
        const piece = symbol === "." ? "" : symbol;
        if (node.getAttribute("data-piece") !== piece) {
          node.replaceChildren();
          if (piece) drawMark(node, piece, CELL / 2, CELL / 2, CELL * 0.28);
          node.setAttribute("data-piece", piece);
        }
        node.setAttribute("class", [
          "cell",
          piece && `piece p${SYMBOLS.indexOf(piece)}`,
          index === lastMove && "last",
          winners.has(index) && "win",
        ].filter(Boolean).join(" "));
      });
      // A stroke through the three in a row, from the first cell's centre to the last's.
      winLayer.replaceChildren();
      if (winners.size) {
        const [from, to] = [Math.min(...winners), Math.max(...winners)].map(cellRect);
        svg("line", {
          x1: from.x + CELL / 2,
          y1: from.y + CELL / 2,
          x2: to.x + CELL / 2,
          y2: to.y + CELL / 2,
          class: "win-line",
        }, winLayer);
      }
      drawCandidateShading(shading, mini ? null : stats, cellRect, {
        occupied: (move) => cells[move] !== ".",
      });
      root.setAttribute("aria-label", `Tic-tac-toe board, ${side} to move`);
      shown = position;
    },
    get position() {
      return shown;
    },
  };
}

export const tictactoe = {
  name: "tictactoe",
  title: "Tic-Tac-Toe",
  initialPosition: ".../.../... x",
  applyMove,
  sideToMove: sideOf,
  winningCells,
  formatMove: (move) => `cell ${move}`,
  createBoard,
};
