// Small DOM and formatting helpers shared by the pages. Text always goes in as
// text nodes (never innerHTML), so bot names from the server cannot inject markup.

import { GAMES } from "./games.js";

/** Create an element: el("a", {href: "/", class: "x"}, "text", child, ...). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Milliseconds as a clock: "12.3" under a minute, "1:05" above. */
export function formatClock(ms) {
  const clamped = Math.max(0, ms);
  if (clamped < 60000) return (clamped / 1000).toFixed(1);
  const seconds = Math.floor(clamped / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

/** A think time: "850 ms", "2.4 s". */
export function formatThink(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A time control: "1 s/move", "500 ms/move + 10 s bank". */
export function formatTimeControl(moveMs, bankMs) {
  const move = moveMs % 1000 === 0 ? `${moveMs / 1000} s` : `${moveMs} ms`;
  if (!bankMs) return `${move}/move`;
  const bank = bankMs % 1000 === 0 ? `${bankMs / 1000} s` : `${bankMs} ms`;
  return `${move}/move + ${bank} bank`;
}

/** A large count compactly: 950, 12.3k, 4.5M. */
export function compact(n) {
  if (n === null || n === undefined) return "–";
  if (n < 1000) return String(Math.round(n));
  if (n < 1e6) return `${(n / 1000).toFixed(n < 1e4 ? 1 : 0)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

/** A rating as shown: whole points. */
export function formatRating(rating) {
  return rating === null || rating === undefined ? "–" : String(Math.round(rating));
}

/** What a provisional rating's "?" means: the words of arena.stats.ranks.PROVISIONAL_HINT
 * (a browser test checks they agree). */
export const PROVISIONAL_TITLE = "provisional: fewer than 20 rated games, or a 95% interval wider than ±100, unless 100 rated games against 3 or more opponents";

/** A fitted rating in words: "1642 ± 51 (95%)", "provisional" when it is. */
export function formatRatingInterval(row) {
  if (row.ci95 === undefined || row.ci95 === null) return formatRating(row.rating);
  const text = `${formatRating(row.rating)} ± ${formatRating(row.ci95)} (95%)`;
  return row.provisional ? `${text}, provisional` : text;
}

/** An Elo figure of an interval: "+108", "−83" (typographic minus), "+∞"/"−∞" for null. */
function eloFigure(value, infinity) {
  if (value === null) return infinity;
  const rounded = Math.floor(value + 0.5); // half up, as arena.stats.interval.format_elo
  return rounded > 0 ? `+${rounded}` : rounded < 0 ? `\u2212${-rounded}` : "+0";
}

/** ``elo_interval`` JSON as every channel shows it: "+108 [+37, +180]", or "too few games". */
export function formatEloInterval(interval) {
  if (interval.too_few) return "too few games";
  return `${eloFigure(interval.elo)} [${eloFigure(interval.low, "\u2212\u221e")}, ${eloFigure(interval.high, "+\u221e")}]`;
}

/** The LOS of ``elo_interval`` JSON: "99.9%", empty when there are too few games. */
export function formatLos(interval) {
  return interval.too_few ? "" : `${(100 * interval.los).toFixed(1)}%`;
}

/** A link to a bot's page. */
export function botLink(name, attrs = {}) {
  return el("a", { href: `/bots/${encodeURIComponent(name)}`, class: "bot-link", ...attrs }, name);
}


/** A relative time for a timestamp string: "just now", "5 min ago", or the date. */
export function formatWhen(iso) {
  if (!iso) return "";
  const then = new Date(iso);
  if (Number.isNaN(then.getTime())) return "";
  const seconds = (Date.now() - then.getTime()) / 1000;
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return then.toLocaleDateString();
}

const TERMINATIONS = {
  line: "line completed",
  draw: "board full",
  timeout: "time ran out",
  illegal_move: "illegal move",
  disconnect: "disconnected",
  resign: "resigned",
  aborted: "aborted",
};

/** Each game's words for the endings its rules decide (from the game registry). */
const GAME_TERMINATIONS = new Map(GAMES.map((spec) => [spec.name, spec.terminations]));

/** Why a game ended, in words: the game's own for a rules ending, else the referee's. */
export function describeTermination(termination, game) {
  return GAME_TERMINATIONS.get(game)?.[termination] ?? TERMINATIONS[termination] ?? termination ?? "";
}

/**
 * A one-line result for an end (`match_end` message or stored record):
 * "alice wins · four in a row", "Draw · board full", "Aborted · server shutting down".
 */
export function describeResult(end, players, game) {
  const why = describeTermination(end.termination, game);
  if (end.winner === 0 || end.winner === 1) {
    let text = `${players[end.winner]} wins · ${why}`;
    if (end.fault === "bot" && (end.faulty_player === 0 || end.faulty_player === 1)) {
      text = `${players[end.winner]} wins · ${players[end.faulty_player]}: ${why}`;
    }
    return text;
  }
  if (end.result === "1/2-1/2") return `Draw · ${why}`;
  const reason = end.reason ? ` · ${end.reason}` : "";
  return `No result · ${why}${reason}`;
}
