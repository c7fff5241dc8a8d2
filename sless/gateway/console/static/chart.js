// A small SVG line chart (no library): time on x, one or more series on y. Every point
// is also a <circle> with a <title>, so a single bucket is visible and readable.

import { h, svg } from "./dom.js";

const W = 720;
const H = 220;
const PAD = { left: 56, right: 16, top: 12, bottom: 28 };

function niceMax(value) {
  if (value <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

function clock(ms) {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

function format(value, unit) {
  const rounded = value >= 100 ? Math.round(value) : Math.round(value * 10) / 10;
  return unit ? `${rounded} ${unit}` : String(rounded);
}

// series: [{label, className, points: [[timeMs, value], ...]}]
export function lineChart({ title, from, to, series, unit = "", integer = false }) {
  const values = series.flatMap((s) => s.points.map((p) => p[1]));
  // counts get whole-number ticks (at least 0..4)
  const yMax = integer ? Math.max(4, Math.ceil(niceMax(Math.max(0, ...values)) / 4) * 4) : niceMax(Math.max(0, ...values));
  const x = (t) => PAD.left + ((t - from) / Math.max(1, to - from)) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (v / yMax) * (H - PAD.top - PAD.bottom);
  const grid = [];
  for (let i = 0; i <= 4; i += 1) {
    const v = (yMax / 4) * i;
    grid.push(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: "grid" }));
    grid.push(svg("text", { x: PAD.left - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, format(v, "")));
  }
  for (let i = 0; i <= 4; i += 1) {
    const t = from + ((to - from) / 4) * i;
    grid.push(svg("text", { x: x(t), y: H - 8, class: "tick", "text-anchor": "middle" }, clock(t)));
  }
  const lines = series.map((s, index) => {
    const group = svg("g", { class: `series s${index}`, "data-series": s.label });
    if (s.points.length > 1) {
      const d = s.points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
      group.append(svg("polyline", { points: d }));
    }
    for (const [t, v] of s.points) {
      group.append(svg("circle", { cx: x(t).toFixed(1), cy: y(v).toFixed(1), r: 3 }, svg("title", {}, `${clock(t)} ${s.label}: ${format(v, unit)}`)));
    }
    return group;
  });
  const count = series.reduce((n, s) => n + s.points.length, 0);
  const summary = series
    .map((s) => (s.points.length ? `${s.label} latest ${format(s.points[s.points.length - 1][1], unit)}` : `${s.label}: no data`))
    .join(", ");
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": `${title}: ${summary}`, "data-points": count },
    svg("line", { x1: PAD.left, x2: PAD.left, y1: PAD.top, y2: H - PAD.bottom, class: "axis" }),
    svg("line", { x1: PAD.left, x2: W - PAD.right, y1: H - PAD.bottom, y2: H - PAD.bottom, class: "axis" }),
    grid,
    lines,
    unit ? svg("text", { x: 4, y: PAD.top + 4, class: "tick" }, unit) : null,
  );
  const legend = h(
    "ul",
    { class: "legend" },
    series.map((s, index) => h("li", { class: `s${index}` }, s.label)),
  );
  const figure = h("figure", { class: "chart-box" }, h("figcaption", {}, title), chart, legend);
  if (count === 0) figure.append(h("p", { class: "muted" }, "No data in this period yet."));
  return figure;
}
