// Widgets shared by the views: page frame, tables, fields, badges, errors, reports.

import { h, uid } from "./dom.js";

export function page(title, ...children) {
  const nodes = children.flat(Infinity).filter((child) => child !== null && child !== undefined && child !== false);
  return [h("h1", { tabindex: "-1", id: "page-title" }, title), ...nodes];
}

export function section(title, ...children) {
  const id = uid("sec");
  return h("section", { "aria-labelledby": id }, h("h2", { id }, title), ...children);
}

// columns: [{label, cell: (row) => node|string}]
export function table(columns, rows, { caption, empty = "Nothing here yet." } = {}) {
  if (rows.length === 0) return h("p", { class: "muted empty" }, empty);
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      caption ? h("caption", { class: "sr-only" }, caption) : null,
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c.label)))),
      h("tbody", {}, rows.map((row) => h("tr", {}, columns.map((c) => h("td", { "data-label": c.label }, c.cell(row)))))),
    ),
  );
}

export function field(label, control, hint) {
  const id = control.id || uid("f");
  control.id = id;
  const hintId = hint ? `${id}-hint` : null;
  if (hintId) control.setAttribute("aria-describedby", hintId);
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hint ? h("small", { id: hintId, class: "muted" }, hint) : null);
}

const PHASES = { Ready: "ok", Failed: "bad", Rejected: "bad", Pending: "wait", Validating: "wait", Building: "wait" };

export function phase(value) {
  return h("span", { class: `badge ${PHASES[value] || "wait"}`, "data-phase": value || "" }, value || "unknown");
}

export function statusBadge(code) {
  const kind = code >= 500 ? "bad" : code >= 400 ? "warn" : "ok";
  return h("span", { class: `badge ${kind}` }, String(code));
}

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return h("time", { datetime: iso, title: iso }, d.toLocaleString());
}

export function errorBox(error) {
  return h("div", { class: "error", role: "alert" }, h("strong", {}, error.code ? `${error.code}: ` : "Error: "), error.message || String(error));
}

export function notice(text) {
  return h("div", { class: "notice", role: "status" }, text);
}

export function code(text) {
  return h("code", {}, text);
}

// A validation report: verdict, stages and findings. `findingAction(finding)` may return
// a handler that shows the finding's line (the review page has the files).
export function report(data, findingAction) {
  if (!data || !data.verdict) return h("p", { class: "muted" }, (data && data.message) || "No upload validated yet.");
  const findings = data.findings || [];
  const stages = data.stages || [];
  return h(
    "div",
    { class: "report" },
    h("p", {}, "Verdict: ", h("span", { class: `badge verdict-${data.verdict}`, "data-verdict": data.verdict }, data.verdict)),
    stages.length
      ? h("ul", { class: "stages" }, stages.map((s) => h("li", {}, h("span", { class: "stage" }, s.name || "stage"), " ", s.status || "", s.detail ? ` — ${s.detail}` : "")))
      : null,
    table(
      [
        {
          label: "Where",
          cell: (f) => {
            const where = f.file ? `${f.file}${f.line ? `:${f.line}` : ""}` : "(archive)";
            const action = findingAction ? findingAction(f) : null;
            return action ? h("button", { type: "button", class: "link", onclick: action }, where) : code(where);
          },
        },
        { label: "Rule", cell: (f) => code(f.rule || "") },
        { label: "Source", cell: (f) => f.source || "" },
        { label: "Severity", cell: (f) => f.severity || "" },
        { label: "Message", cell: (f) => h("span", { class: "finding-message" }, f.message || "") },
      ],
      findings,
      { caption: "Findings", empty: "No findings." },
    ),
  );
}

// The files of an upload (from .../files) with the finding lines highlighted.
const lineId = (path, line) => `line-${encodeURIComponent(path)}-${line}`.replace(/[^A-Za-z0-9_-]/g, "_");

export function sourceView(file) {
  const hits = new Set(file.lines);
  const lines = file.text.replace(/\n$/, "").split("\n");
  const list = h(
    "ol",
    { class: "source", "aria-label": `${file.path}, flagged lines highlighted` },
    lines.map((text, index) => {
      const number = index + 1;
      return h(
        "li",
        { id: lineId(file.path, number), class: hits.has(number) ? "hit" : null, tabindex: hits.has(number) ? "-1" : null, "data-line": number },
        h("span", { class: "n", "aria-hidden": "true" }, String(number)),
        h("code", {}, text || " "),
      );
    }),
  );
  return h("div", { class: "file" }, h("h3", {}, code(file.path), file.truncated ? h("span", { class: "muted" }, " (first 256 KiB)") : ""), list);
}

// A finding's file:line as a jump to its highlighted line, when that line is on the page.
export function jumpTo(finding) {
  if (!finding.file || !finding.line) return null;
  const target = () => document.getElementById(lineId(finding.file, finding.line));
  return () => {
    const line = target();
    if (line) {
      line.scrollIntoView({ block: "center" });
      line.focus();
    }
  };
}
