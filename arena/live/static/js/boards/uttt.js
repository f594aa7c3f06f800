// Ultimate tic-tac-toe (and its quick variant): replaying moves and the SVG board.
//
// Position text (protocol/games/uttt.py): nine local boards in index order
// joined by "/", each nine cells row-major, a space, the side to move, a space,
// the local board the side to move must play in (0-8) or "-" for any open one.
// A move is 9 * board + cell. A local board is closed once won (by whoever
// first makes a line in it) or full; the cell played sends the opponent to the
// board of that index unless it is closed. Plain uttt is won by three local
// boards in a line; uttt-quick by the first local board won.

import { SYMBOLS, drawCandidateShading, drawMark, lineOf, sideOf, svg, svgRoot } from "./common.js";

const CELL = 40;
const LOCAL = 3 * CELL;
const GAP = 14;
const PAD = 10;
const SIZE = 3 * LOCAL + 2 * GAP + 2 * PAD;

function parse(position) {
  const [boards, side, forced] = position.split(" ");
  const locals = boards.split("/").map((board) => board.split(""));
  return { locals, side, forced: forced === "-" ? null : Number(forced) };
}

function localWinner(cells) {
  if (lineOf(cells, "x")) return "x";
  if (lineOf(cells, "o")) return "o";
  return null;
}

function isClosed(cells) {
  return localWinner(cells) !== null || cells.every((c) => c !== ".");
}

function encode(locals, side, forced) {
  return `${locals.map((cells) => cells.join("")).join("/")} ${side} ${forced === null ? "-" : forced}`;
}

function makeApplyMove(quick) {
  return function applyMove(position, move) {
    const { locals, side, forced } = parse(position);
    const board = Math.floor(move / 9);
    const cell = move % 9;
    if (!Number.isInteger(move) || move < 0 || move > 80) throw new Error(`uttt: no move ${move}`);
    if (forced !== null && board !== forced) throw new Error(`uttt: must play in board ${forced}`);
    if (isClosed(locals[board]) || locals[board][cell] !== ".") {
      throw new Error(`uttt: cell ${cell} of board ${board} is not playable`);
    }
    locals[board][cell] = side;
    const won = locals.map(localWinner);
    const over = quick
      ? won.some((w) => w !== null)
      : lineOf(won, side) !== null || locals.every(isClosed);
    const next = over || isClosed(locals[cell]) ? null : cell;
    return encode(locals, side === "x" ? "o" : "x", next);
  };
}

/** Local boards that make the winning line (plain uttt), or the first won board (quick). */
function makeWinningBoards(quick) {
  return function winningBoards(position) {
    const won = parse(position).locals.map(localWinner);
    if (quick) {
      const first = won.findIndex((w) => w !== null);
      return first < 0 ? [] : [first];
    }
    return lineOf(won, "x") ?? lineOf(won, "o") ?? [];
  };
}

function localOrigin(board) {
  return {
    x: PAD + (board % 3) * (LOCAL + GAP),
    y: PAD + Math.floor(board / 3) * (LOCAL + GAP),
  };
}

function cellRect(move) {
  if (move < 0 || move > 80) return null;
  const { x, y } = localOrigin(Math.floor(move / 9));
  const cell = move % 9;
  return { x: x + (cell % 3) * CELL, y: y + Math.floor(cell / 3) * CELL, size: CELL };
}

function makeCreateBoard(winningBoards, title) {
  return function createBoard(container, { mini = false } = {}) {
    const root = svgRoot(SIZE, SIZE, `${title} board`, `board board-uttt${mini ? " mini" : ""}`);
    svg("rect", { x: 0, y: 0, width: SIZE, height: SIZE, rx: 16, class: "ttt-surface" }, root);
    // Layers, bottom to top: local board tiles and grids, candidate shading, stones,
    // then the big marks of won local boards.
    const tiles = svg("g", { class: "tiles" }, root);
    const shading = svg("g", { class: "candidates" }, root);
    const stones = svg("g", { class: "stones" }, root);
    const bigLayer = svg("g", { class: "big-marks" }, root);
    const localNodes = [];
    const stoneGroups = [];
    const cellNodes = [];
    const bigMarks = [];
    for (let b = 0; b < 9; b += 1) {
      const { x, y } = localOrigin(b);
      const local = svg("g", { class: "local", "data-board": b }, tiles);
      svg("rect", {
        x: x - 4, y: y - 4, width: LOCAL + 8, height: LOCAL + 8, rx: 9, class: "local-frame",
      }, local);
      const grid = svg("g", { class: "grid" }, local);
      for (const k of [1, 2]) {
        svg("line", { x1: x + k * CELL, y1: y + 4, x2: x + k * CELL, y2: y + LOCAL - 4 }, grid);
        svg("line", { x1: x + 4, y1: y + k * CELL, x2: x + LOCAL - 4, y2: y + k * CELL }, grid);
      }
      localNodes.push(local);
      const group = svg("g", { class: "local-stones", "data-board": b }, stones);
      stoneGroups.push(group);
      for (let c = 0; c < 9; c += 1) {
        const rect = cellRect(9 * b + c);
        cellNodes.push(svg("g", {
          class: "cell",
          "data-cell": 9 * b + c,
          "data-piece": "",
          transform: `translate(${rect.x} ${rect.y})`,
        }, group));
      }
      bigMarks.push(svg("g", { class: "big-mark" }, bigLayer));
    }
    container.replaceChildren(root);
    let shown = null;

    return {
      element: root,
      update({ position, lastMove = null, stats = null }) {
        const { locals, side, forced } = parse(position);
        const winning = new Set(winningBoards(position));
        const over = winning.size > 0 || locals.every(isClosed);
        locals.forEach((cells, b) => {
          const winner = localWinner(cells);
          const closed = isClosed(cells);
          const playable = !over && !closed && (forced === null || forced === b);
          localNodes[b].setAttribute("class", [
            "local",
            winner && `won p${SYMBOLS.indexOf(winner)}`,
            closed && !winner && "full",
            playable && `playable to-move-p${SYMBOLS.indexOf(side)}`,
            winning.has(b) && "win",
          ].filter(Boolean).join(" "));
          localNodes[b].setAttribute("data-winner", winner ?? "");
          stoneGroups[b].setAttribute("class", `local-stones${closed ? " closed" : ""}`);
          const big = bigMarks[b];
          if (big.getAttribute("data-piece") !== (winner ?? "")) {
            big.replaceChildren();
            const { x, y } = localOrigin(b);
            if (winner) {
              const seat = SYMBOLS.indexOf(winner);
              drawMark(big, winner, x + LOCAL / 2, y + LOCAL / 2, LOCAL * 0.34, `p${seat}`);
            }
            big.setAttribute("data-piece", winner ?? "");
          }
          cells.forEach((symbol, c) => {
            const move = 9 * b + c;
            const node = cellNodes[move];
            const piece = symbol === "." ? "" : symbol;
            if (node.getAttribute("data-piece") !== piece) {
              node.replaceChildren();
              if (piece) drawMark(node, piece, CELL / 2, CELL / 2, CELL * 0.27);
              node.setAttribute("data-piece", piece);
            }
            node.setAttribute("class", [
              "cell", piece && `piece p${SYMBOLS.indexOf(piece)}`, move === lastMove && "last",
            ].filter(Boolean).join(" "));
          });
        });
        // Small cells: print the share only on the moves that matter.
        drawCandidateShading(shading, mini ? null : stats, cellRect, {
          labelMin: 0.08,
          showValue: false,
          occupied: (move) => locals[Math.floor(move / 9)][move % 9] !== ".",
        });
        const where = forced === null ? "any open board" : `board ${forced}`;
        root.setAttribute("aria-label", `${title} board, ${side} to move in ${where}`);
        shown = position;
      },
      get position() {
        return shown;
      },
    };
  };
}

function variant(name, title, quick) {
  const winningBoards = makeWinningBoards(quick);
  return {
    name,
    title,
    initialPosition: `${Array(9).fill(".........").join("/")} x -`,
    applyMove: makeApplyMove(quick),
    sideToMove: sideOf,
    winningCells: winningBoards,
    formatMove: (move) => `${Math.floor(move / 9)}·${move % 9}`,
    createBoard: makeCreateBoard(winningBoards, title),
  };
}

export const uttt = variant("uttt", "Ultimate Tic-Tac-Toe", false);
export const utttQuick = variant("uttt-quick", "Ultimate Tic-Tac-Toe (quick)", true);
