// Shared pieces of the board renderers: SVG building, piece symbols, 3x3 lines,
// and the candidate-move overlay helpers.

export const SVG_NS = "http://www.w3.org/2000/svg";

/** Player index -> the symbol positions use ("x" moves first). */
export const SYMBOLS = ["x", "o"];

/** Create an SVG element with attributes, optionally appended to `parent`. */
export function svg(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  if (parent) parent.append(node);
  return node;
}

/** An <svg> root that scales to its container, with an accessible label. */
export function svgRoot(width, height, label, className) {
  return svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": label,
    class: className,
    preserveAspectRatio: "xMidYMid meet",
  });
}

/** The side to move (0 or 1) of any encoded position: its second space-separated field. */
export function sideOf(position) {
  return position.split(" ")[1] === "o" ? 1 : 0;
}

/** The eight lines of a 3x3 board, as cell-index triples. */
export const LINES3 = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
];

/** The first completed line of `symbol` in a 9-char cell string or array, or null. */
export function lineOf(cells, symbol) {
  return LINES3.find((line) => line.every((i) => cells[i] === symbol)) ?? null;
}

/** Percent text for a share in [0, 1]: "42%", "<1%" for tiny but non-zero shares. */
export function percent(share) {
  if (share > 0 && share < 0.005) return "<1%";
  return `${Math.round(share * 100)}%`;
}

/** A signed value in [-1, 1] for labels: "+0.42", "−0.10" (typographic minus). */
export function signed(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  const text = Math.abs(value).toFixed(digits);
  return value < 0 ? `\u2212${text}` : `+${text}`;
}

/** Draw an X or O mark centred at (cx, cy) with half-size r, into `parent`. */
export function drawMark(parent, symbol, cx, cy, r, className = "") {
  const group = svg("g", { class: `mark mark-${symbol} ${className}`.trim() }, parent);
  if (symbol === "x") {
    svg("line", { x1: cx - r, y1: cy - r, x2: cx + r, y2: cy + r }, group);
    svg("line", { x1: cx - r, y1: cy + r, x2: cx + r, y2: cy - r }, group);
  } else {
    svg("circle", { cx, cy, r }, group);
  }
  return group;
}

/**
 * Shade candidate cells with the searching player's colour, opacity by visit share
 * (relative to the most visited move, so a flat search still shows its favourite).
 * `stats` is telemetry.js's candidateStats(...) or null; `cellRect(move)` gives
 * {x, y, size} for a move; labels are drawn only when `labelMin` share is reached, and
 * never on an `occupied(move)` cell (the move just played: its mark says enough).
 */
export function drawCandidateShading(
  layer, stats, cellRect, { labelMin = 0, showValue = true, occupied = () => false } = {},
) {
  layer.replaceChildren();
  if (!stats) return;
  layer.setAttribute("class", `candidates mover-${stats.mover ?? 0}`);
  for (const [move, stat] of stats.moves) {
    const rect = cellRect(move);
    if (!rect) continue;
    const group = svg("g", {
      class: `candidate${stat.rank === 0 ? " best" : ""}`,
      "data-move": move,
      "data-share": stat.share.toFixed(4),
      "data-visits": stat.visits,
    }, layer);
    const strength = stats.maxShare > 0 ? stat.share / stats.maxShare : 0;
    const shade = svg("rect", {
      x: rect.x + rect.size * 0.06,
      y: rect.y + rect.size * 0.06,
      width: rect.size * 0.88,
      height: rect.size * 0.88,
      rx: rect.size * 0.12,
      class: "candidate-shade",
    }, group);
    shade.style.setProperty("--strength", (0.12 + 0.6 * strength).toFixed(3));
    const title = svg("title", {}, group);
    title.textContent = `move ${move}: ${stat.visits} visits (${percent(stat.share)})` +
      (stat.value === null ? "" : `, value ${signed(stat.value)}`);
    if (stat.share >= labelMin && !occupied(move)) {
      const label = svg("text", {
        x: rect.x + rect.size / 2,
        y: rect.y + rect.size * (showValue && stat.value !== null ? 0.47 : 0.58),
        class: "candidate-share",
        "font-size": rect.size * 0.28,
      }, group);
      label.textContent = percent(stat.share);
      if (showValue && stat.value !== null) {
        const value = svg("text", {
          x: rect.x + rect.size / 2,
          y: rect.y + rect.size * 0.74,
          class: "candidate-value",
          "font-size": rect.size * 0.18,
        }, group);
        value.textContent = signed(stat.value);
      }
    }
  }
}
