// The evaluation graph of the match page: over the moves, each bot's own value of the
// position as it reported it with its move (`analysis.value`, -1 loss to +1 win), and for
// Connect Four the solved value where `arena analyse` knows it (win +1, draw 0, loss -1).
// Every value is drawn from the first player's side, so the two bots' lines can be read
// against each other and against the truth: where a bot's line is far from the solved
// one, it misjudged the position. Clicking a point (or anywhere over a move) jumps the
// replay there. Styling is in CSS (classes only).

import { signed, svg } from "./boards/common.js";

const MARGIN = { left: 30, right: 10, top: 10, bottom: 22 };

function linePath(points) {
  return points.map(([x, y], i) => `${i ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`).join("");
}

/**
 * The points to draw: `bots` [[{ply, value}], [{ply, value}]] per seat, each value from the
 * first player's side, and `solved` [{ply, value}] likewise, for the position after move
 * `ply` (0-based). `analyses[k]` is the report of the move at ply k, `movers[k]` its seat;
 * `solvedAfter(k)` the solved outcome of the move at ply k from its mover's side, or null.
 */
export function graphPoints({ analyses, movers, solvedAfter }) {
  const bots = [[], []];
  const solved = [];
  movers.forEach((seat, ply) => {
    const value = analyses[ply]?.value;
    const side = seat === 0 ? 1 : -1;
    if (value !== undefined && value !== null) bots[seat].push({ ply, value: side * value });
    const outcome = solvedAfter(ply);
    if (outcome !== null && outcome !== undefined) solved.push({ ply, value: side * outcome });
  });
  return { bots, solved };
}

/**
 * An <svg> graph of `points` (graphPoints) over `moves` moves, `width` CSS pixels wide,
 * the shown ply `current` marked; `onPick(ply)` is called with the number of moves to show
 * when the reader clicks. `names` are the players' names, for the tooltips.
 */
export function evalGraph(points, { moves, current, onPick, names, width = 360, label = "Evaluation" }) {
  const WIDTH = Math.max(240, Math.round(width));
  const HEIGHT = WIDTH < 480 ? 140 : 170;
  const plot = { x0: MARGIN.left, x1: WIDTH - MARGIN.right, y0: MARGIN.top, y1: HEIGHT - MARGIN.bottom };
  const span = Math.max(moves, 1);
  const x = (ply) => plot.x0 + ((ply + 1) / span) * (plot.x1 - plot.x0);
  const y = (v) => plot.y0 + ((1 - Math.max(-1, Math.min(1, v))) / 2) * (plot.y1 - plot.y0);
  const total = points.bots[0].length + points.bots[1].length + points.solved.length;
  const root = svg("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, class: "eval-graph", role: "img",
    "aria-label": label, "data-points": total, "data-solved-points": points.solved.length,
  });
  svg("title", {}, root).textContent = label;
  const grid = svg("g", { class: "chart-grid" }, root);
  for (const [v, text] of [[1, "+1"], [0, "0"], [-1, "−1"]]) {
    svg("line", { x1: plot.x0, x2: plot.x1, y1: y(v), y2: y(v), class: v === 0 ? "zero" : null }, grid);
    svg("text", { x: plot.x0 - 5, y: y(v) + 4, class: "tick", "text-anchor": "end" }, grid).textContent = text;
  }
  svg("text", { x: plot.x1, y: HEIGHT - 6, class: "tick", "text-anchor": "end" }, grid).textContent =
    `move ${moves}`;
  svg("text", { x: plot.x0, y: HEIGHT - 6, class: "tick" }, grid).textContent = "move 1";
  if (current > 0) {
    svg("line", { class: "cursor", x1: x(current - 1), x2: x(current - 1), y1: plot.y0, y2: plot.y1 }, root);
  }
  // A band per move catches clicks between the points too.
  const hits = svg("g", { class: "eval-hits" }, root);
  const band = (plot.x1 - plot.x0) / span;
  for (let ply = 0; ply < moves; ply += 1) {
    const rect = svg("rect", {
      x: x(ply) - band / 2, y: plot.y0, width: band, height: plot.y1 - plot.y0, "data-ply": ply + 1,
    }, hits);
    rect.addEventListener("click", () => onPick(ply + 1));
  }
  if (points.solved.length) {
    svg("path", { class: "solved-line", d: linePath(points.solved.map((p) => [x(p.ply), y(p.value)])) }, root);
  }
  points.bots.forEach((seatPoints, seat) => {
    if (!seatPoints.length) return;
    svg("path", { class: `value-line p${seat}`, d: linePath(seatPoints.map((p) => [x(p.ply), y(p.value)])) }, root);
  });
  const dots = svg("g", { class: "eval-dots" }, root);
  const dot = (p, className, what) => {
    const circle = svg("circle", {
      class: className, cx: x(p.ply), cy: y(p.value), r: 3.5, "data-ply": p.ply + 1,
    }, dots);
    svg("title", {}, circle).textContent = `move ${p.ply + 1}: ${what} ${signed(p.value)} (first player's side)`;
    circle.addEventListener("click", () => onPick(p.ply + 1));
  };
  for (const p of points.solved) dot(p, "solved-dot", "solved");
  points.bots.forEach((seatPoints, seat) => {
    for (const p of seatPoints) dot(p, `value-dot p${seat}`, `${names?.[seat] ?? `player ${seat + 1}`}'s value`);
  });
  return root;
}
