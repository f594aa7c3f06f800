// The tournament pages: /tournaments lists them, /tournaments/<id> shows one live.
//
// Everything comes from GET /api/tournaments[/<id>] (the same object as
// `arena tournament status --json`), polled every few seconds while the
// tournament can still change: progress, standings with intervals, the
// crosstable, per-pair statistics, for an SPRT its LLR over games against the
// bounds, and the games with links to their replays.

import { fetchJSON } from "./api.js";
import { sprtChart } from "./chart.js";
import { el, formatEloInterval, formatLos, formatWhen } from "./dom.js";

const POLL_MS = 2000;
const $ = (id) => document.getElementById(id);
const idMatch = location.pathname.match(/^\/tournaments\/(\d+)$/);
const root = $("tournament");

function signed(value, digits = 0) {
  const text = Math.abs(value).toFixed(digits);
  if (Number(text) === 0) return text;
  return value > 0 ? `+${text}` : `\u2212${text}`;
}

function setConnection(status, text) {
  const node = $("connection");
  node.dataset.status = status;
  node.textContent = text;
}

// The list --------------------------------------------------------------------

/** An SPRT's state in words: its verdict, or where its LLR stands between the bounds. */
function sprtVerdict(sprt) {
  if (sprt.verdict === "H0" || sprt.verdict === "H1") {
    return `${sprt.verdict} accepted after ${sprt.verdict_games} games`;
  }
  if (sprt.verdict) return `stopped at max games, LLR ${sprt.llr.toFixed(2)}`;
  return `running, LLR ${sprt.llr.toFixed(2)} in [${sprt.lower.toFixed(2)}, ${sprt.upper.toFixed(2)}]`;
}

/** The list's "Leader / verdict" cell: the SPRT's verdict, or the leader ± 95%. */
function headlineCell(row) {
  if (row.sprt) {
    return el("td", { class: "headline", dataset: { verdict: row.sprt.verdict ?? "running" } },
      sprtVerdict(row.sprt));
  }
  const leader = row.leader;
  if (!leader) return el("td", { class: "headline muted" }, "no games yet");
  return el("td", { class: "headline", dataset: { leader: leader.bot } },
    el("strong", {}, leader.bot), ` ${signed(leader.rating)} ± ${Math.round(leader.ci95)}`);
}

/** The list's "Games" cell: "12 / 40" while a tournament can still play; once finished,
 * the games it played (an SPRT ends at its verdict, not at its max games). */
function gamesCell(row) {
  const finished = row.status === "finished";
  return el("td", { class: "num games", title: finished ? "games played" : "games played / planned" },
    finished ? `${row.games}` : `${row.games} / ${row.total}`);
}

function listTable(rows) {
  if (!rows.length) return el("p", { class: "muted" }, "No tournaments yet.");
  return el("div", { class: "table-scroll" }, el("table", { class: "tournaments" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col", class: "num" }, "#"),
      el("th", { scope: "col" }, "Name"),
      el("th", { scope: "col" }, "Game"),
      el("th", { scope: "col" }, "Format"),
      el("th", { scope: "col" }, "Status"),
      el("th", { scope: "col", class: "num" }, "Games"),
      el("th", { scope: "col", title: "a round robin's or gauntlet's leader (rating ± 95%, relative to the field), an SPRT's verdict" },
        "Leader / verdict"))),
    el("tbody", {}, rows.map((row) => el("tr", { dataset: { id: row.id } },
      el("td", { class: "num" }, row.id),
      el("th", { scope: "row" }, el("a", { href: `/tournaments/${row.id}` }, row.name || `Tournament ${row.id}`)),
      el("td", {}, row.game),
      el("td", {}, row.format),
      el("td", {}, el("span", { class: "status-badge", dataset: { status: row.status } }, row.status)),
      gamesCell(row),
      headlineCell(row))))));
}

async function showList() {
  try {
    const data = await fetchJSON("/api/tournaments");
    $("overview-body").replaceChildren(listTable(data.tournaments));
    root.dataset.status = "ready";
    setConnection("polling", "");
  } catch (error) {
    $("overview-body").replaceChildren(el("p", { class: "error" }, `Unavailable: ${error.message}`));
  }
}

// One tournament ----------------------------------------------------------------

function overview(t) {
  const p = t.progress;
  const s = t.settings;
  const items = [
    ["Status", el("span", { class: "status-badge", dataset: { status: t.status } }, t.status)],
    ["Game", t.game],
    ["Format", t.format],
    ["Bots", t.bots.length],
    ["Time", `${s.move_ms} ms/move${s.bank_ms ? ` + ${s.bank_ms} ms bank` : ""}`],
    ["Openings", `${t.openings.source} (${t.openings.count})`],
    ["Playing", p.playing],
    ["Started", t.started_at ? formatWhen(t.started_at) : "not yet"],
  ];
  if (t.leader) items.push(["Leader", `${t.leader.bot} ${signed(t.leader.rating)} ± ${Math.round(t.leader.ci95)}`]);
  return [
    el("dl", { class: "tournament-meta" }, items.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v)))),
    el("progress", { class: "tournament-progress", id: "progress", max: p.total, value: p.done }),
    el("p", { class: "muted small" },
      `${p.done} of ${p.total} games done: ${p.counted} played, ${p.forfeits} forfeited, ${p.void} void; `
      + `${p.pairs_complete} complete game pairs.`),
  ];
}

function standingsTable(rows) {
  return el("table", { class: "standings" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col", class: "num" }, "Rank"),
      el("th", { scope: "col" }, "Bot"),
      el("th", { scope: "col", class: "num" }, "Rating"),
      el("th", { scope: "col", class: "num" }, "± 95%"),
      el("th", { scope: "col", class: "num" }, "Points"),
      el("th", { scope: "col", class: "num" }, "W / D / L"))),
    el("tbody", {}, rows.map((row) => el("tr", { dataset: { bot: row.bot } },
      el("td", { class: "num" }, row.rank_low === row.rank_high ? row.rank : `${row.rank} (${row.rank_low}–${row.rank_high})`),
      el("th", { scope: "row", class: row.removed ? "removed" : null }, row.bot),
      el("td", { class: "num rating" }, signed(row.rating)),
      el("td", { class: "num" }, Math.round(row.ci95)),
      el("td", { class: "num" }, `${row.points} / ${row.scored_games}`),
      el("td", { class: "num" }, `${row.wins} / ${row.draws} / ${row.losses}`)))));
}

function crosstableTable(cross) {
  const bots = cross.bots;
  return el("table", { class: "crosstable" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col" }, ""),
      bots.map((_, j) => el("th", { scope: "col", class: "num", title: bots[j] }, j + 1)),
      el("th", { scope: "col", class: "num" }, "Total"))),
    el("tbody", {}, bots.map((bot, i) => el("tr", { dataset: { bot } },
      el("th", { scope: "row" }, `${i + 1} ${bot}`),
      cross.cells[i].map((cell, j) => {
        if (i === j) return el("td", { class: "self" }, "×");
        if (!cell) return el("td", { class: "num muted" }, "–");
        const share = cell.points / cell.games;
        const tone = share > 0.5 ? "good" : share < 0.5 ? "bad" : null;
        return el("td", { class: `num${tone ? ` ${tone}` : ""}`, dataset: { points: cell.points, games: cell.games } },
          `${cell.points} / ${cell.games}`);
      }),
      el("td", { class: "num" }, `${cross.totals[i].points} / ${cross.totals[i].games}`)))));
}

function meetingsTable(meetings) {
  return el("table", { class: "meetings" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col" }, "Bots"),
      el("th", { scope: "col", class: "num" }, "W / D / L"),
      el("th", { scope: "col", class: "num" }, "Pentanomial"),
      el("th", { scope: "col", class: "num", title: "Elo difference of the first bot [95% interval]" }, "Elo [95%]"),
      el("th", { scope: "col", class: "num", title: "likelihood of superiority" }, "LOS"))),
    el("tbody", {}, meetings.map((m) => el("tr", {},
      el("th", { scope: "row" }, `${m.bots[0]} – ${m.bots[1]}`),
      el("td", { class: "num" }, `${m.wins} / ${m.draws} / ${m.losses}`),
      el("td", { class: "num", title: "LL, LD+DL, LW+DD+WL, DW+WD, WW" }, m.pentanomial.join(" ")),
      el("td", { class: "num elo-interval" }, `${formatEloInterval(m.elo_interval)}${m.pairs ? "" : " (games)"}`),
      el("td", { class: "num" }, formatLos(m.elo_interval))))));
}

function gamesTable(games) {
  const result = (score) => (score === 1 ? "1–0" : score === 0 ? "0–1" : "½–½");
  return el("table", { class: "games" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col", class: "num" }, "Pair"),
      el("th", { scope: "col" }, "First"),
      el("th", { scope: "col" }, "Second"),
      el("th", { scope: "col" }, "Opening"),
      el("th", { scope: "col", class: "num" }, "Result"),
      el("th", { scope: "col" }, "Replay"))),
    el("tbody", {}, games.slice().reverse().map((g) => el("tr", { dataset: { match: g.match_id } },
      el("td", { class: "num" }, `${g.pair}.${g.game + 1}`),
      el("td", {}, g.players[0]),
      el("td", {}, g.players[1]),
      el("td", { class: "mono" }, g.opening),
      el("td", { class: "num" }, result(g.score)),
      el("td", {}, el("a", { href: `/matches/${encodeURIComponent(g.match_id)}` }, g.match_id))))));
}

let shownSprt = null; // redrawn at the panel's width when the window is resized

function showSprt(sprt) {
  shownSprt = sprt;
  $("sprt-panel").hidden = !sprt;
  if (!sprt) return;
  $("sprt-verdict").textContent = sprtVerdict(sprt);
  const body = $("sprt-body");
  body.replaceChildren(
    el("p", {}, `H0: ${sprt.elo0} Elo, H1: ${sprt.elo1} Elo (${sprt.model}); LLR `,
      el("strong", { id: "llr" }, sprt.llr.toFixed(3)),
      ` in [${sprt.lower.toFixed(3)}, ${sprt.upper.toFixed(3)}]; pentanomial ${sprt.pentanomial.join(" ")}`),
  );
  body.append(sprtChart(sprt, body.clientWidth));
}

let resizing = null;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => showSprt(shownSprt), 150);
});

function show(t) {
  document.title = `${t.name || `Tournament ${t.id}`} · MCTS Arena`;
  $("tournament-title").textContent = t.name || `Tournament ${t.id}`;
  $("overview-heading").textContent = `Tournament ${t.id}`;
  $("progress-text").textContent = `${t.progress.done} / ${t.progress.total}`;
  $("overview-body").replaceChildren(...overview(t));
  root.dataset.status = t.status;
  showSprt(t.sprt);
  for (const [panel, body, content] of [
    ["standings-panel", "standings", t.standings.length ? standingsTable(t.standings) : null],
    ["crosstable-panel", "crosstable", crosstableTable(t.crosstable)],
    ["meetings-panel", "meetings", t.meetings.length ? meetingsTable(t.meetings) : null],
    ["games-panel", "games", t.games.length ? gamesTable(t.games) : null],
  ]) {
    $(panel).hidden = !content;
    if (content) $(body).replaceChildren(content);
  }
  $("games-count").textContent = `${t.progress.counted} played${t.games.length < t.progress.counted ? `, latest ${t.games.length} listed` : ""}`;
}

async function poll() {
  try {
    const t = await fetchJSON(`/api/tournaments/${idMatch[1]}`);
    show(t);
    setConnection("polling", t.status === "running" ? "live" : "");
    if (["finished", "cancelled"].includes(t.status)) return;
  } catch (error) {
    if (error.status === 404) {
      $("overview-body").replaceChildren(el("p", { class: "error" }, error.message));
      root.dataset.status = "missing";
      return;
    }
    setConnection("reconnecting", "reconnecting…");
  }
  setTimeout(poll, POLL_MS);
}

if (idMatch) poll();
else showList();
