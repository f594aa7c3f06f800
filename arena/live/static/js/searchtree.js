// The search tree a bot reported with its move (`analysis.tree`, docs/protocol.md), drawn
// as SVG: the position at the left, each ply a column to the right, every node a box with
// its move and visits (its value in the tooltip), the principal line (the most visited
// child at each step) highlighted. Nodes are coloured by the player who plays them.
//
// The tree arrives flat: each node names its parent by index (none: a move of the
// position), parents before children. Styling is in CSS (classes only: the pages'
// Content-Security-Policy allows no inline styles).

import { signed, svg } from "./boards/common.js";
import { compact } from "./dom.js";

const ROW = 26; // px per leaf row
const BOX_H = 20;
const ROOT_W = 28; // the position's own column
const PAD = 4;
const CHAR_W = 6.1; // px per character of the 10px monospace node labels

/** Children per node index, and the position's own children last (index tree.length). */
export function childrenOf(tree) {
  const children = Array.from({ length: tree.length + 1 }, () => []);
  tree.forEach((node, index) => {
    const parent = node.parent ?? null;
    children[parent === null ? tree.length : parent].push(index);
  });
  return children;
}

/** Node indices of the principal line: from the position, the most visited child each step. */
export function principalLine(tree) {
  const children = childrenOf(tree);
  const line = [];
  let options = children[tree.length];
  while (options.length) {
    const best = options.reduce((a, b) => (tree[b].visits > tree[a].visits ? b : a));
    line.push(best);
    options = children[best];
  }
  return line;
}

/**
 * An <svg> diagram of `tree` (a list of {move, visits, value?, parent?}) reported by seat
 * `mover`, `width` CSS pixels wide; `formatMove` names moves the game's way. Null without
 * a tree.
 */
export function treeDiagram(tree, { mover, formatMove, width = 360, label = "Search tree" }) {
  if (!tree?.length) return null;
  const children = childrenOf(tree);
  const principal = new Set(principalLine(tree));
  const depth = new Array(tree.length).fill(1);
  tree.forEach((node, index) => {
    if (node.parent !== undefined && node.parent !== null) depth[index] = depth[node.parent] + 1;
  });
  const levels = Math.max(...depth);
  // Rows: leaves in order top to bottom (most visited first); a parent centred on its children.
  const row = new Array(tree.length).fill(0);
  let leaves = 0;
  const byVisits = (list) => [...list].sort((a, b) => tree[b].visits - tree[a].visits);
  const place = (index) => {
    const kids = byVisits(children[index]);
    if (!kids.length) {
      row[index] = leaves;
      leaves += 1;
      return;
    }
    kids.forEach(place);
    row[index] = (row[kids[0]] + row[kids.at(-1)]) / 2;
  };
  const top = byVisits(children[tree.length]);
  top.forEach(place);
  const WIDTH = Math.max(240, Math.round(width));
  const HEIGHT = Math.max(1, leaves) * ROW + PAD * 2;
  const column = (WIDTH - ROOT_W - PAD * 2) / levels;
  const boxW = Math.min(64, column - 8);
  const x = (d) => PAD + ROOT_W + (d - 1) * column + (column - boxW) / 2;
  const y = (r) => PAD + r * ROW + ROW / 2;
  const rootY = top.length ? (y(row[top[0]]) + y(row[top.at(-1)])) / 2 : HEIGHT / 2;

  const root = svg("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, class: "search-tree",
    role: "img", "aria-label": label, "data-nodes": tree.length, "data-principal": principal.size,
  });
  svg("title", {}, root).textContent = label;
  const edges = svg("g", { class: "tree-edges" }, root);
  const nodes = svg("g", { class: "tree-nodes" }, root);
  svg("circle", { class: "tree-root", cx: PAD + ROOT_W / 2, cy: rootY, r: 6 }, nodes);
  tree.forEach((node, index) => {
    const parent = node.parent ?? null;
    const x0 = parent === null ? PAD + ROOT_W / 2 + 6 : x(depth[parent]) + boxW;
    const y0 = parent === null ? rootY : y(row[parent]);
    const x1 = x(depth[index]);
    const y1 = y(row[index]);
    const mid = (x0 + x1) / 2;
    svg("path", {
      class: principal.has(index) ? "edge principal" : "edge",
      d: `M${x0.toFixed(1)},${y0.toFixed(1)}C${mid.toFixed(1)},${y0.toFixed(1)} ${mid.toFixed(1)},${y1.toFixed(1)} ${x1.toFixed(1)},${y1.toFixed(1)}`,
    }, edges);
    // Odd depths are the mover's own moves, even depths its opponent's answers.
    const seat = depth[index] % 2 === 1 ? mover : 1 - mover;
    const group = svg("g", {
      class: `tree-node p${seat}${principal.has(index) ? " principal" : ""}`,
      "data-move": node.move, "data-depth": depth[index],
    }, nodes);
    const value = node.value === undefined || node.value === null ? "" : `, value ${signed(node.value)}`;
    svg("title", {}, group).textContent =
      `${formatMove(node.move)}: ${node.visits.toLocaleString()} visits${value} (for the player who plays it)`;
    svg("rect", { x: x1, y: y1 - BOX_H / 2, width: boxW, height: BOX_H, rx: 5 }, group);
    const text = svg("text", { x: x1 + boxW / 2, y: y1 + 4, "text-anchor": "middle" }, group);
    // The visits too when they fit (the tooltip always has them).
    const full = `${formatMove(node.move)} · ${compact(node.visits)}`;
    text.textContent = full.length * CHAR_W <= boxW - 4 ? full : formatMove(node.move);
  });
  return root;
}
