// A bot's page (/bots/<name>): its rating in each game with the 95% interval,
// rank range (within its group of bots connected by games), a chart of how the rating developed, its
// record against each opponent (with the Elo difference those games show), its
// accuracy against perfect play (moves solved by `arena analyse`), and its latest
// matches. Everything comes from GET /api/bots/<name>.

import { fetchJSON } from "./api.js";
import { gameFor } from "./boards/index.js";
import { ratingChart } from "./chart.js";
import {
  PROVISIONAL_TITLE, botLink, describeTermination, el, formatEloInterval, formatLos,
  formatRating, formatRatingInterval, formatWhen,
} from "./dom.js";

const $ = (id) => document.getElementById(id);
const name = decodeURIComponent(location.pathname.split("/").filter(Boolean).at(-1) ?? "");

function gameTitle(game) {
  try {
    return gameFor(game).title;
  } catch {
    return game;
  }
}

function fact(label, ...value) {
  return el("div", {}, el("dt", {}, label), el("dd", {}, ...value));
}

function facts(line) {
  const rank = line.rank === null ? "—"
    : line.rank_low === line.rank_high ? `${line.rank} of ${line.bots}`
      : `${line.rank} of ${line.bots} (could be ${line.rank_low}–${line.rank_high})`;
  return el("dl", { class: "bot-facts" },
    fact("Rating", el("span", { class: "rating" }, formatRating(line.rating)),
      line.ci95 === null ? null : el("span", { class: "ci" }, ` ± ${formatRating(line.ci95)}`),
      line.provisional ? el("span", { class: "badge", title: PROVISIONAL_TITLE }, "provisional") : null),
    fact("Rank", rank, line.group_note ? el("p", { class: "group-note muted" }, line.group_note) : null),
    fact("Games", `${line.games}: ${line.wins} W / ${line.draws} D / ${line.losses} L`));
}

function opponentsTable(line) {
  if (!line.opponents.length) return null;
  return el("table", { class: "opponents" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col" }, "Opponent"),
      el("th", { scope: "col", class: "num" }, "Games"),
      el("th", { scope: "col", class: "num wdl" }, "W / D / L"),
      el("th", { scope: "col", class: "num", title: "Elo difference these games show [95% interval]" }, "Elo diff [95%]"),
      el("th", { scope: "col", class: "num", title: "likelihood of superiority" }, "LOS"),
      el("th", { scope: "col", class: "num wdl" }, "Their rating"))),
    el("tbody", {}, line.opponents.map((row) => el("tr", { dataset: { bot: row.bot } },
      el("th", { scope: "row" }, botLink(row.bot)),
      el("td", { class: "num" }, row.games),
      el("td", { class: "num wdl" }, `${row.wins} / ${row.draws} / ${row.losses}`),
      el("td", { class: "num elo-interval" }, formatEloInterval(row.elo_interval)),
      el("td", { class: "num" }, formatLos(row.elo_interval)),
      el("td", { class: "num wdl" }, formatRatingInterval(row))))));
}

/** A table in a box that scrolls sideways when the table is wider than the panel. */
function scrolling(table) {
  return table && el("div", { class: "table-scroll" }, table);
}

/** Charts to (re)draw at their figure's width: figure -> draw(width). */
const charts = new Map();

function drawCharts() {
  for (const [figure, draw] of charts) {
    const width = figure.clientWidth;
    if (width && figure.dataset.width !== String(width)) {
      figure.dataset.width = String(width);
      figure.querySelector("svg")?.remove();
      figure.prepend(draw(width));
    }
  }
}

function gameSection(line) {
  const title = gameTitle(line.game);
  const label = `${name}'s rating in ${title}: ${formatRatingInterval(line)} after ${line.games} games`;
  let chart = null;
  if (line.history.length) {
    chart = el("figure", { class: "chart" },
      el("figcaption", { class: "legend muted" },
        el("span", { class: "legend-item" }, el("span", { class: "key band-key" }),
          "rating with its 95% interval")));
    // One rating: the chart draws the fitted rating only (no second line).
    charts.set(chart, (width) => ratingChart(line.history, [], label, width));
  }
  return el("section", { class: "panel bot-game", dataset: { game: line.game }, "aria-label": title },
    el("div", { class: "panel-head" }, el("h2", {}, title)),
    facts(line),
    chart,
    scrolling(opponentsTable(line)));
}

function interval(pair, format) {
  return pair ? ` (95%: ${format(pair[0])}–${format(pair[1])})` : "";
}

/** One game's accuracy against perfect play, every figure with its interval and count. */
function accuracyLine(row) {
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  const two = (x) => x.toFixed(2);
  return el("dl", { class: "bot-facts accuracy", dataset: { game: row.game } },
    fact(`${gameTitle(row.game)}: accuracy`,
      el("span", { class: "accuracy-value" }, row.accuracy === null ? "—" : pct(row.accuracy)),
      el("span", { class: "ci" }, interval(row.accuracy_ci95, pct)),
      el("span", { class: "muted" }, ` of ${row.judged} judged moves (${row.moves} analysed)`)),
    fact("Blunders per game",
      el("span", { class: "blunders-value" }, row.blunders_per_game === null ? "—" : two(row.blunders_per_game)),
      el("span", { class: "ci" }, interval(row.blunders_per_game_ci95, two)),
      el("span", { class: "muted" }, ` (${row.blunders} in ${row.games} ${row.games === 1 ? "game" : "games"})`)));
}

function resultText(match) {
  if (match.status === "live") return "playing";
  if (match.score === null) return "no result";
  return match.score === 1 ? "won" : match.score === 0 ? "lost" : "draw";
}

function matchList(matches) {
  if (!matches.length) return el("p", { class: "muted" }, "No matches yet.");
  return el("ul", { class: "recent" }, matches.map((match) => el("li", { dataset: { matchId: match.id } },
    el("a", { href: `/matches/${encodeURIComponent(match.id)}` },
      el("span", { class: "recent-players" }, `vs ${match.opponent}`),
      el("span", { class: `recent-result${match.score === 1 ? " won" : ""}` }, resultText(match)),
      el("span", { class: "recent-meta muted" },
        [gameTitle(match.game), match.rated ? "rated" : "unrated",
          match.termination ? describeTermination(match.termination, match.game) : null,
          formatWhen(match.ended_at ?? match.started_at)].filter(Boolean).join(" · "))))));
}

/** Play buttons when the bot accepts guests (GET /api/play), one per game. */
async function showPlayButtons() {
  try {
    const { bots } = await fetchJSON("/api/play");
    const row = bots.find((entry) => entry.bot === name);
    if (!row) return;
    $("bot-facts").after(el("p", { class: "play-actions", id: "bot-play" },
      ...row.games.map((game) => el("a", {
        class: `play-button${row.busy ? " busy" : ""}`,
        href: `/play/${encodeURIComponent(name)}?game=${encodeURIComponent(game)}`,
        dataset: { game },
      }, `Play ${gameTitle(game)}`))));
  } catch {
    // No buttons: the rest of the page is what matters here.
  }
}

async function load() {
  const root = $("bot");
  document.title = `${name} · MCTS Arena`;
  $("bot-name").textContent = name;
  try {
    const data = await fetchJSON(`/api/bots/${encodeURIComponent(name)}`);
    $("bot-facts").replaceChildren(
      el("span", { class: `presence${data.online ? " online" : ""}`, "aria-hidden": "true" }),
      data.online ? "online" : "offline",
      data.active ? "" : " · removed",
      ` · registered ${new Date(data.created_at).toLocaleDateString()}`);
    if (data.online) showPlayButtons();
    $("bot-games").replaceChildren(...(data.ratings.length
      ? data.ratings.map(gameSection)
      : [el("p", { class: "panel muted" }, "No rated games yet.")]));
    $("bot-accuracy").hidden = !data.accuracy.length;
    $("accuracy-lines").replaceChildren(...data.accuracy.map(accuracyLine));
    $("bot-matches").replaceChildren(matchList(data.recent_matches));
    drawCharts(); // now that the figures are laid out and have a width
    root.dataset.status = "ready";
  } catch (error) {
    $("bot-games").replaceChildren(el("p", { class: "panel error" },
      error.status === 404 ? `No bot is called ${name}.` : `Bot unavailable: ${error.message}`));
    root.dataset.status = error.status === 404 ? "missing" : "error";
  }
}

let resizing = null;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(drawCharts, 150);
});

load();
