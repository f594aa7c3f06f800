// Leaderboards: one table per game from GET /api/leaderboard?game=NAME, behind tabs.
//
// Bots are ranked by their rating (the one fitted over all rated games), shown
// with its 95% interval; a rank range ("1–3") says which places the intervals
// allow, and "?" marks a provisional rating (its title says the rule). Bots that
// games do not connect are never ranked in one list: each group of the API's
// `groups` is its own table, under the line that says why. Each bot links to
// its page (/bots/NAME).

import { fetchJSON } from "./api.js";
import { gameFor } from "./boards/index.js";
import { PROVISIONAL_TITLE, botLink, el, formatRating, formatRatingInterval } from "./dom.js";


function rankCell(row) {
  const low = row.rank_low ?? row.rank;
  const high = row.rank_high ?? row.rank;
  const range = low === high ? null
    : el("span", { class: "rank-range muted", title: `could rank ${low} to ${high}` }, `${low}–${high}`);
  return el("td", { class: "num rank" }, row.rank, range);
}

function ratingCell(row) {
  return el("td", { class: "num rating-cell" },
    el("span", { class: "rating" }, formatRating(row.rating)),
    row.ci95 === undefined || row.ci95 === null ? null
      : el("span", { class: "ci muted" }, ` ± ${formatRating(row.ci95)}`),
    row.provisional ? el("abbr", { class: "provisional", title: PROVISIONAL_TITLE }, "?") : null);
}

/** One table per group (main group first), each later one under its note. */
function tables(data) {
  const entries = data.entries ?? [];
  if (!entries.length) return [el("p", { class: "muted" }, "No rated games yet.")];
  const groups = data.groups ?? [{ group: 0, bots: entries.map((row) => row.bot), note: null }];
  const byBot = new Map(entries.map((row) => [row.bot, row]));
  return groups.map((group) => el("section", { class: "leaderboard-group", dataset: { group: group.group } },
    group.note ? el("p", { class: "group-note muted" }, group.note) : null,
    table(group.bots.map((bot) => byBot.get(bot)).filter(Boolean))));
}

function table(entries) {
  return el("table", { class: "leaderboard" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col", class: "num" }, "#"),
      el("th", { scope: "col" }, "Bot"),
      el("th", { scope: "col", class: "num", title: "fitted rating ± 95% interval" }, "Rating"),
      el("th", { scope: "col", class: "num" }, "Games"),
      el("th", { scope: "col", class: "num wdl" }, "W / D / L"))),
    el("tbody", {}, entries.map((row) => el("tr", {
      dataset: { bot: row.bot, provisional: String(Boolean(row.provisional)) },
      title: `${formatRatingInterval(row)} · ${row.wins} W / ${row.draws} D / ${row.losses} L`,
    },
      rankCell(row),
      el("th", { scope: "row" },
        el("span", {
          class: `presence${row.online ? " online" : ""}`,
          title: row.online ? "online" : "offline",
          "aria-label": row.online ? "online" : "offline",
        }),
        botLink(row.bot)),
      ratingCell(row),
      el("td", { class: "num" }, row.games),
      el("td", { class: "num wdl" }, `${row.wins} / ${row.draws} / ${row.losses}`)))));
}

/**
 * Tabs of leaderboards in `container`, one per name in `games`; the first tab with
 * rated games opens (unless the reader already picked one).
 * Returns {refresh()} to reload the visible table (e.g. when a match ends).
 */
export function mountLeaderboards(container, games) {
  let current = games[0];
  let picked = false; // the reader chose a tab: do not switch it for them
  const tabs = el("div", { class: "tabs", role: "tablist", "aria-label": "Game" });
  const panel = el("div", { class: "tab-panel", role: "tabpanel", "aria-live": "polite" });
  const buttons = new Map();

  async function load(game) {
    panel.setAttribute("aria-busy", "true");
    panel.dataset.game = game;
    try {
      const data = await fetchJSON(`/api/leaderboard?game=${encodeURIComponent(game)}`);
      if (panel.dataset.game !== game) return; // another tab was chosen meanwhile
      panel.replaceChildren(...tables(data));
    } catch (error) {
      panel.replaceChildren(el("p", { class: "error" }, `Leaderboard unavailable: ${error.message}`));
    } finally {
      panel.removeAttribute("aria-busy");
    }
  }

  function select(game) {
    current = game;
    for (const [name, button] of buttons) {
      button.setAttribute("aria-selected", String(name === game));
      button.tabIndex = name === game ? 0 : -1;
    }
    load(game);
  }

  for (const game of games) {
    const button = el("button", { type: "button", role: "tab", class: "tab", dataset: { game } },
      gameFor(game).title);
    button.addEventListener("click", () => {
      picked = true;
      select(game);
    });
    button.addEventListener("keydown", (event) => {
      // Arrow keys move between tabs, as the ARIA tabs pattern expects.
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      const next = games[(games.indexOf(game) + step + games.length) % games.length];
      picked = true;
      select(next);
      buttons.get(next).focus();
    });
    buttons.set(game, button);
    tabs.append(button);
  }
  container.replaceChildren(tabs, panel);
  select(current);
  // Open on the first game that has rated games, rather than an empty table.
  Promise.all(games.map((game) => fetchJSON(`/api/leaderboard?game=${encodeURIComponent(game)}`)
    .then((data) => (data.entries ?? []).length, () => 0)))
    .then((counts) => {
      const busiest = counts.findIndex((count) => count > 0);
      if (busiest > 0 && !picked) select(games[busiest]);
    });
  return {
    refresh(game = current) {
      if (game === current) load(current);
    },
    select,
  };
}
