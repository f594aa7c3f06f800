// The viewer's charts, drawn as SVG from the data alone: the bot page's rating
// history and the tournament page's SPRT.
//
// Rating history: x is time; y is rating. The band is the fitted rating's 95%
// interval after each checkpoint (the y range holds all of it: a wide early
// interval is shown as wide as it is), the solid line the fitted rating, the
// dashed line the incremental Elo after each rated game.
//
// Both charts title their axes and keep every text in the margins, clear of
// the lines. Styling is in CSS (classes only: the pages' Content-Security-Policy
// allows no inline styles).

const SVG = "http://www.w3.org/2000/svg";
/** Room for the y tick labels and the rotated y title (left), the x ticks and title (bottom). */
const MARGIN = { left: 64, right: 14, top: 12, bottom: 46 };

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

/** Round steps (1, 2, 5 × 10^k) covering [lo, hi] with about `count` ticks. */
export function niceTicks(lo, hi, count = 5) {
  const span = Math.max(hi - lo, 1e-9);
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(t);
  return ticks;
}

/** A time as an axis label, as precise as the axis' span needs (dates, minutes, seconds, ms). */
function timeLabel(ms, span) {
  const date = new Date(ms);
  if (span >= 2 * 86400 * 1000) return date.toLocaleDateString([], { month: "short", day: "numeric" });
  if (span >= 2 * 60 * 1000) return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const seconds = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  if (span >= 4000) return seconds;
  return `${date.getSeconds()}.${String(date.getMilliseconds()).padStart(3, "0")} s`;
}

/** The x title centred under the plot and the y title turned along its left edge. */
function axisTitles(plot, height, xTitle, yTitle) {
  const middle = (plot.y0 + plot.y1) / 2;
  return [
    svg("text", { class: "axis-title x", x: (plot.x0 + plot.x1) / 2, y: height - 6, "text-anchor": "middle" }, xTitle),
    svg("text", {
      class: "axis-title y", x: 14, y: middle, "text-anchor": "middle", transform: `rotate(-90 14 ${middle})`,
    }, yTitle),
  ];
}

function linePath(points) {
  return points.map(([x, y], i) => `${i ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`).join("");
}

let clipIds = 0;

/**
 * An <svg> chart of `history` ([{at, rating, ci95, games}]) and `eloHistory`
 * ([{at, elo}]), `width` CSS pixels wide (drawn at that size, so its text stays
 * legible on a phone); `label` describes it for screen readers.
 */
export function ratingChart(history, eloHistory, label, width = 640) {
  const WIDTH = Math.max(280, Math.round(width));
  const HEIGHT = WIDTH < 480 ? 220 : 260;
  // A checkpoint without a finite interval has no band to draw (its line point stays).
  const fit = history.map((p) => ({
    t: Date.parse(p.at), rating: p.rating, ci95: Number.isFinite(p.ci95) ? p.ci95 : 0, games: p.games,
  }));
  const elo = eloHistory.map((p) => ({ t: Date.parse(p.at), elo: p.elo }));
  const times = [...fit.map((p) => p.t), ...elo.map((p) => p.t)];
  let t0 = Math.min(...times);
  let t1 = Math.max(...times);
  if (!(t1 > t0)) { t0 -= 1000; t1 += 1000; }
  const values = [
    ...fit.flatMap((p) => [p.rating - p.ci95, p.rating + p.ci95]),
    ...elo.map((p) => p.elo),
  ];
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  const pad = Math.max((hi - lo) * 0.06, 10);
  lo -= pad;
  hi += pad;
  const plot = { x0: MARGIN.left, x1: WIDTH - MARGIN.right, y0: MARGIN.top, y1: HEIGHT - MARGIN.bottom };
  const x = (t) => plot.x0 + ((t - t0) / (t1 - t0)) * (plot.x1 - plot.x0);
  const y = (v) => plot.y1 - ((v - lo) / (hi - lo)) * (plot.y1 - plot.y0);

  const clipId = `plot-clip-${++clipIds}`;
  const root = svg("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, class: "rating-chart", role: "img", "aria-label": label,
    "data-points": fit.length, "data-elo-points": elo.length,
  }, svg("title", {}, label));
  root.append(svg("defs", {}, svg("clipPath", { id: clipId },
    svg("rect", { x: plot.x0, y: plot.y0, width: plot.x1 - plot.x0, height: plot.y1 - plot.y0 }))));

  const grid = svg("g", { class: "chart-grid" });
  for (const tick of niceTicks(lo, hi)) {
    grid.append(svg("line", { x1: plot.x0, x2: plot.x1, y1: y(tick), y2: y(tick) }));
    grid.append(svg("text", { x: plot.x0 - 6, y: y(tick) + 4, class: "tick", "text-anchor": "end" },
      String(Math.round(tick))));
  }
  const xTicks = WIDTH < 480 ? 2 : 4;
  let previous = null;
  for (let i = 0; i <= xTicks; i += 1) {
    const t = t0 + ((t1 - t0) * i) / xTicks;
    const text = timeLabel(t, t1 - t0);
    if (text === previous) continue; // a label says something new or nothing
    previous = text;
    const anchor = i === 0 ? "start" : i === xTicks ? "end" : "middle";
    grid.append(svg("text", { x: x(t), y: plot.y1 + 16, class: "tick", "text-anchor": anchor }, text));
  }
  root.append(grid, ...axisTitles(plot, HEIGHT, "time", "rating"));

  const layers = svg("g", { "clip-path": `url(#${clipId})` });
  if (fit.length) {
    const upper = fit.map((p) => [x(p.t), y(p.rating + p.ci95)]);
    const lower = fit.map((p) => [x(p.t), y(p.rating - p.ci95)]).reverse();
    layers.append(svg("path", { class: "band", d: `${linePath([...upper, ...lower])}Z` }));
  }
  if (elo.length) layers.append(svg("path", { class: "elo-line", d: linePath(elo.map((p) => [x(p.t), y(p.elo)])) }));
  if (fit.length) {
    layers.append(svg("path", { class: "fit-line", d: linePath(fit.map((p) => [x(p.t), y(p.rating)])) }));
    const last = fit.at(-1);
    layers.append(svg("circle", { class: "fit-dot", cx: x(last.t), cy: y(last.rating), r: 3.5 }));
  }
  root.append(layers);
  root.append(svg("rect", {
    class: "chart-frame", x: plot.x0, y: plot.y0, width: plot.x1 - plot.x0, height: plot.y1 - plot.y0,
  }));
  return root;
}

/**
 * An <svg> chart of an SPRT's LLR against games played (`sprt` as in the
 * tournament status: history [[games, llr]], lower, upper, llr), with its two
 * bounds; the bounds and zero are labelled on the y axis, outside the plot.
 * Drawn `width` CSS pixels wide (at most 704), so its text keeps its size on a phone.
 */
export function sprtChart(sprt, width = 640) {
  const WIDTH = Math.max(280, Math.min(704, Math.round(width)));
  const HEIGHT = WIDTH < 480 ? 240 : 280;
  const plot = { x0: 76, x1: WIDTH - 14, y0: 12, y1: HEIGHT - 46 };
  const history = sprt.history.length ? sprt.history : [[0, 0]];
  const maxGames = Math.max(2, ...history.map(([g]) => g));
  const values = history.map(([, llr]) => llr).concat([sprt.lower, sprt.upper, 0]);
  const low = Math.min(...values) * 1.1, high = Math.max(...values) * 1.1;
  const x = (g) => plot.x0 + (g / maxGames) * (plot.x1 - plot.x0);
  const y = (v) => plot.y0 + ((high - v) / (high - low)) * (plot.y1 - plot.y0);
  const chart = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, class: "sprt-chart", role: "img",
    "aria-label": `LLR ${sprt.llr.toFixed(2)} between ${sprt.lower.toFixed(2)} and ${sprt.upper.toFixed(2)}` });
  const horizontal = (cls, v) => svg("line", { class: cls, x1: plot.x0, x2: plot.x1, y1: y(v), y2: y(v) });
  const yLabel = (v, text) => svg("text", { class: "tick", x: plot.x0 - 6, y: y(v) + 4, "text-anchor": "end" }, text);
  chart.append(
    horizontal("zero", 0),
    horizontal("bound upper", sprt.upper),
    horizontal("bound lower", sprt.lower),
    svg("line", { class: "axis", x1: plot.x0, x2: plot.x1, y1: plot.y1, y2: plot.y1 }),
    svg("line", { class: "axis", x1: plot.x0, x2: plot.x0, y1: plot.y0, y2: plot.y1 }),
    yLabel(sprt.upper, `H1 ${sprt.upper.toFixed(2)}`),
    yLabel(sprt.lower, `H0 ${sprt.lower.toFixed(2)}`),
  );
  // Zero gets a label only where it does not crowd a bound's.
  if (Math.min(Math.abs(y(0) - y(sprt.upper)), Math.abs(y(0) - y(sprt.lower))) > 14) chart.append(yLabel(0, "0"));
  const ticks = niceTicks(0, maxGames, WIDTH < 480 ? 3 : 5).filter((g) => Number.isInteger(g));
  ticks.forEach((g, i) => chart.append(svg("text", {
    class: "tick", x: x(g), y: plot.y1 + 16, "text-anchor": i === 0 ? "start" : g >= maxGames ? "end" : "middle",
  }, String(g))));
  chart.append(
    ...axisTitles(plot, HEIGHT, "games played", "LLR"),
    svg("polyline", { class: "llr", points: history.map(([g, v]) => `${x(g).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }),
  );
  return chart;
}
