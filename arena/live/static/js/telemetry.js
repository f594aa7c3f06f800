// Search telemetry: what a bot reported about its search with a move (`analysis`
// in protocol messages: simulations and sims_per_s for MCTS, nodes and nodes_per_s
// for node-counting searches, value, depth, the principal variation (pv), and per
// candidate move its visits and value). Only what was reported is shown. Values are from the searching player's
// point of view, -1 (certain loss) to +1 (certain win).
//
// candidateStats() turns an analysis into visit shares for the board overlays;
// TelemetryPanel shows the summary and the top candidates as a table, and beside
// each candidate its solved value when `arena analyse` solved the position's moves
// (Connect Four: what the search thought next to what was true).

import { compact, el } from "./dom.js";
import { percent, signed } from "./boards/common.js";
import { describeValue } from "./solved.js";

/**
 * Visit shares of an analysis, or null when it has no candidate moves with visits.
 * Returns {mover, total, maxShare, best, moves: Map(move -> {visits, share, value, rank})},
 * the Map ordered by visits, most visited first.
 */
export function candidateStats(analysis, mover) {
  const moves = analysis?.moves ?? [];
  const total = moves.reduce((sum, m) => sum + (m.visits || 0), 0);
  if (!moves.length || total <= 0) return null;
  const ordered = [...moves].sort((a, b) => b.visits - a.visits || a.move - b.move);
  const stats = new Map();
  ordered.forEach((m, rank) => {
    stats.set(m.move, {
      visits: m.visits,
      share: m.visits / total,
      value: m.value === undefined ? null : m.value,
      rank,
    });
  });
  return { mover, total, maxShare: ordered[0].visits / total, best: ordered[0].move, moves: stats };
}

const TOP_ROWS = 7;

const present = (value) => value !== null && value !== undefined;

/**
 * The summary facts of an analysis as [label, value, tooltip], only those the bot
 * reported, each named for what it counts: an MCTS bot reports simulations (playouts),
 * a node-counting search such as alpha-beta reports nodes (positions searched).
 */
export function searchFacts(analysis) {
  const facts = [];
  const counts = [
    ["Simulations", "sims", analysis.simulations, analysis.sims_per_s, "playouts the search ran"],
    ["Nodes", "nodes", analysis.nodes, analysis.nodes_per_s, "positions the search visited"],
  ];
  for (const [label, unit, count, rate, title] of counts) {
    if (present(count)) facts.push([label, compact(count), title]);
    if (present(rate)) facts.push(["Speed", `${compact(rate)} ${unit}/s`, `${title}, per second`]);
  }
  if (present(analysis.value)) {
    facts.push(["Value", signed(analysis.value), "the mover's expected score: −1 loss, 0 draw, +1 win"]);
  }
  if (present(analysis.depth)) facts.push(["Depth", String(analysis.depth), "search depth in plies"]);
  return facts;
}

/** The telemetry side panel of the match page. */
export class TelemetryPanel {
  constructor(container) {
    this.container = container;
    this.clear("Search statistics appear here when a bot reports them with its move.");
  }

  clear(message) {
    this.container.replaceChildren(el("p", { class: "muted telemetry-empty" }, message));
    this.container.dataset.state = "empty";
  }

  /**
   * Show `analysis` reported by `playerName` (seat `mover`) for the move at `ply`;
   * `formatMove` names moves the game's way, `played` is the move it chose.
   */
  show({ analysis, mover, playerName, ply, played, formatMove, solved = null }) {
    const stats = candidateStats(analysis, mover);
    if (!analysis) {
      this.clear(ply === null ? "No move yet." : `No search statistics for move ${ply + 1}.`);
      return;
    }
    this.container.dataset.state = "shown";
    const summary = el("dl", { class: "telemetry-facts" },
      searchFacts(analysis).map(([name, value, title]) =>
        el("div", { title }, el("dt", {}, name), el("dd", {}, String(value)))));
    const heading = el("p", { class: "telemetry-who" },
      el("span", { class: `chip p${mover}` }), ` ${playerName} · move ${ply + 1}`);
    const parts = [heading, summary];
    if (analysis.pv?.length) {
      // The line the search expects (UGI engines' `info pv`, alpha-beta), in the game's names.
      parts.push(el("p", {
        class: "telemetry-pv",
        title: "the principal variation: the line the search expects, from the move played on",
      }, el("span", { class: "muted" }, "Line "), analysis.pv.map(formatMove).join(" ")));
    }
    if (stats) {
      // The solved value of each candidate, from the mover's side, when analysed.
      const truth = new Map((solved?.candidates ?? []).map((c) => [c.move, c]));
      const best = Math.max(...[...truth.values()].map((c) => c.outcome ?? -2));
      const rows = [...stats.moves.entries()].slice(0, TOP_ROWS).map(([move, stat]) => {
        const bar = el("span", { class: "share-bar" }, el("span", { class: `share-fill p${mover}` }));
        bar.firstChild.style.setProperty("--share", (stat.share / stats.maxShare).toFixed(3));
        const known = truth.get(move);
        const solvedCell = truth.size
          ? el("td", {
            class: `solved-cell${known?.outcome === best ? " best" : ""}`,
            dataset: { outcome: String(known?.outcome ?? "") },
            title: known ? describeValue(known, ply).detail : null,
          }, known ? describeValue(known, ply).text : "–")
          : null;
        return el("tr", { class: move === played ? "played" : null, dataset: { move: String(move) } },
          el("th", { scope: "row" }, formatMove(move)),
          el("td", { class: "num" }, compact(stat.visits)),
          el("td", { class: "share" }, bar, el("span", { class: "num" }, percent(stat.share))),
          el("td", { class: "num" }, stat.value === null ? "–" : signed(stat.value)),
          solvedCell);
      });
      parts.push(el("table", { class: `telemetry-moves${truth.size ? " with-solved" : ""}` },
        el("thead", {}, el("tr", {},
          el("th", { scope: "col" }, "Move"), el("th", { scope: "col", class: "num" }, "Visits"),
          el("th", { scope: "col" }, "Share"), el("th", { scope: "col", class: "num" }, "Value"),
          truth.size ? el("th", { scope: "col", title: "the solved value of the move" }, "Solved") : null)),
        el("tbody", {}, rows)));
      if (stats.moves.size > TOP_ROWS) {
        parts.push(el("p", { class: "muted small" }, `+ ${stats.moves.size - TOP_ROWS} more candidates`));
      }
    }
    this.container.replaceChildren(...parts);
  }
}
