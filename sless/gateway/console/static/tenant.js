// The tenant's views: functions, one function, deploy, triggers, jobs, secrets.

import { api, call, enc, get, stream, upload } from "./api.js";
import { versionsSection } from "./versions.js";
import { lineChart } from "./chart.js";
import { append, clear, h } from "./dom.js";
import { code, errorBox, field, jumpTo, notice, page, phase, report, section, sourceView, statusBadge, table, when } from "./ui.js";
import { fromDropped, fromPicked, zipFiles } from "./zip.js";

const base = (ctx) => `/v1/namespaces/${enc(ctx.ns)}`;
const fnPath = (ctx, name) => `${base(ctx)}/functions/${enc(name)}`;
const fnLink = (name) => `#/functions/${enc(name)}`;
const SETTLED = new Set(["Ready", "Failed", "Rejected"]);

export async function functions(ctx) {
  const list = h("div", { "aria-live": "polite" });
  const refresh = async () => {
    const [data, metrics] = await Promise.all([
      get(`${base(ctx)}/functions`),
      get(`${base(ctx)}/metrics`).catch(() => ({ functions: {} })),
    ]);
    const figures = (f) => metrics.functions[f.name] || {};
    clear(list).append(
      table(
        [
          { label: "Name", cell: (f) => h("a", { href: fnLink(f.name) }, f.name) },
          { label: "Phase", cell: (f) => phase(f.status.phase) },
          { label: "Runtime", cell: (f) => f.spec.runtime },
          { label: "Instances", cell: (f) => String(total(figures(f).gateway_service_count)) },
          { label: "Calls", cell: (f) => String(total(figures(f).gateway_function_invocation_total)) },
          { label: "URL", cell: (f) => h("a", { href: f.url }, f.url) },
        ],
        data.functions,
        { caption: "Functions", empty: "No functions yet: deploy one." },
      ),
    );
  };
  await refresh();
  // phases move on their own (building, a review decided): keep the list current
  ctx.every(3000, refresh);
  return page(
    "Functions",
    h("p", {}, h("a", { href: "#/deploy", class: "button" }, "Deploy a function")),
    h("p", { class: "muted" }, "Instances: running now. Calls: since the gateway started."),
    list,
  );
}

// a metric's value, or the sum of its labelled values ({"code=200": 3, "code=500": 1})
function total(value) {
  if (typeof value === "number") return value;
  if (value && typeof value === "object") return Object.values(value).reduce((a, b) => a + b, 0);
  return 0;
}

function specList(spec) {
  const rows = [
    ["Runtime", spec.runtime],
    ["Entrypoint", spec.entrypoint],
    ["Memory", `${spec.memory_mb} MiB`],
    ["CPU", `${spec.cpu_millis} millicores`],
    ["Timeout", `${spec.timeout_s} s`],
    ["Concurrency", `${spec.concurrency} per instance`],
    ["Instances", `${spec.min_instances} to ${spec.max_instances}`],
    ["Auth", spec.auth],
    ["Egress", (spec.egress || []).join(", ") || "none"],
    ["Environment", Object.keys(spec.env || {}).join(", ") || "none"],
    ["Code", spec.code ? spec.code.sha256 : "not uploaded"],
  ];
  return h("dl", { class: "spec" }, rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v ?? ""))]));
}

function latency(ctx, name) {
  const box = h("div", { class: "chart-slot", "aria-live": "polite" });
  async function refresh() {
    const data = await get(`${base(ctx)}/stats/invocations?function=${enc(name)}&window_s=3600&step_s=60`);
    const to = Date.now();
    const points = (key) => data.buckets.map((b) => [Date.parse(b.at) + data.step_s * 500, b[key]]);
    clear(box).append(
      lineChart({
        title: "Latency, last hour (per minute)",
        integer: true,
        from: to - 3600 * 1000,
        to,
        unit: "ms",
        series: [
          { label: "p50", points: points("p50_ms") },
          { label: "p99", points: points("p99_ms") },
        ],
      }),
    );
  }
  return { box, refresh };
}

function invocations(ctx, name) {
  const filter = h(
    "select",
    {},
    h("option", { value: "all" }, "all"),
    h("option", { value: "ok" }, "succeeded (< 400)"),
    h("option", { value: "client" }, "client errors (4xx)"),
    h("option", { value: "error" }, "errors (5xx)"),
  );
  const list = h("div", { class: "invocations" });
  let rows = [];
  const keep = {
    all: () => true,
    ok: (r) => r.status < 400,
    client: (r) => r.status >= 400 && r.status < 500,
    error: (r) => r.status >= 500,
  };
  function render() {
    clear(list).append(
      table(
        [
          { label: "Status", cell: (r) => statusBadge(r.status) },
          { label: "Duration", cell: (r) => `${Math.round(r.duration_ms * 10) / 10} ms` },
          { label: "Time", cell: (r) => when(r.started_at) },
          { label: "Trigger", cell: (r) => r.trigger || "http" },
          // a 500's record may carry only why the call died (reason), not an error text;
          // a 5xx the function answered itself carries neither (its traceback is logged)
          { label: "Error", cell: (r) => r.error || r.reason || (r.status >= 500 ? `the function answered ${r.status} (see its logs)` : "") },
          { label: "ID", cell: (r) => code(r.id) },
        ],
        rows.filter(keep[filter.value]),
        { caption: "Invocations", empty: "No invocations." },
      ),
    );
  }
  // a keyset page of PAGE rows; ``cursors`` holds the cursors of the pages before this one
  let cursors = [];
  let next = null;
  const newer = h("button", { type: "button", class: "small" }, "Newer");
  const older = h("button", { type: "button", class: "small" }, "Older");
  const where = h("span", { class: "muted" });
  const statusClass = { all: "", ok: "", client: "&status=4xx", error: "&status=5xx" };
  async function load() {
    const cursor = cursors.length ? `&cursor=${enc(cursors[cursors.length - 1])}` : "";
    const data = await get(`${base(ctx)}/invocations?function=${enc(name)}&limit=${PAGE}${statusClass[filter.value]}${cursor}`);
    rows = data.invocations;
    next = data.next_cursor;
    newer.disabled = cursors.length === 0;
    older.disabled = !next;
    where.textContent = ` page ${cursors.length + 1}`;
    render();
  }
  filter.addEventListener("change", () => {
    cursors = [];
    load();
  });
  older.addEventListener("click", () => {
    if (!next) return;
    cursors.push(next);
    load();
  });
  newer.addEventListener("click", () => {
    cursors.pop();
    load();
  });
  // the newest page follows new calls; an older page stays as it was read
  const refresh = () => (cursors.length ? Promise.resolve() : load());
  const pager = h("p", { class: "pager" }, newer, " ", older, where);
  return { box: h("div", {}, field("Show", filter), list, pager), refresh };
}

const PAGE = 20;

// The log, followed through the API's stream (GET .../logs/stream, as `sless logs -f`):
// the last lines, then each new one after the time the gateway read it and the
// invocation it names. Text only: a function writes what it likes.
function logs(ctx, name) {
  const pre = h("pre", { class: "logs", tabindex: "0", "aria-label": "Function logs" }, "(no output yet)");
  let shown = 0;
  function add(event) {
    const atBottom = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 24;
    if (shown === 0) pre.textContent = "";
    const call = event.invocation_id && !event.line.includes(event.invocation_id) ? `[${event.invocation_id}] ` : "";
    const stamp = event.time ? `${event.time.slice(11)} ` : "";
    pre.append(h("span", { class: event.time ? "live" : "backlog" }, `${stamp}${call}${event.line}\n`));
    shown += 1;
    // the page keeps the last MAX_LINES
    while (shown > MAX_LINES) {
      pre.firstChild.remove();
      shown -= 1;
    }
    if (atBottom) pre.scrollTop = pre.scrollHeight;
  }
  const stop = stream(`${fnPath(ctx, name)}/logs/stream?tail=200`, add, (error) => {
    pre.append(h("span", { class: "error" }, `(the log stream ended: ${error.message})\n`));
  });
  ctx.onLeave(stop);
  return { box: pre, refresh: () => Promise.resolve() };
}

const MAX_LINES = 2000;

function invokePanel(ctx, fn, after) {
  const method = h("select", {}, ["POST", "GET", "PUT", "DELETE"].map((m) => h("option", { value: m }, m)));
  const path = h("input", { type: "text", value: "", placeholder: "/optional/path?query" });
  const body = h("textarea", { rows: 4, spellcheck: "false" }, '{"name": "console"}');
  const out = h("div", { class: "response", "aria-live": "polite" });
  const submit = h("button", { type: "submit" }, "Invoke");
  const form = h(
    "form",
    { class: "invoke" },
    h("div", { class: "row" }, field("Method", method), field("Path", path)),
    field("JSON body", body, "Sent as application/json; ignored for GET."),
    submit,
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const suffix = path.value.trim();
    const target = `/fn/${enc(ctx.ns)}/${enc(fn.name)}${suffix && !suffix.startsWith("/") && !suffix.startsWith("?") ? "/" : ""}${suffix}`;
    const payload = method.value === "GET" ? undefined : body.value;
    if (payload) {
      try {
        JSON.parse(payload);
      } catch {
        clear(out).append(errorBox({ code: "invalid", message: "the body is not valid JSON" }));
        return;
      }
    }
    submit.disabled = true;
    const stop = new AbortController();
    ctx.onLeave(() => stop.abort());
    const output = h("pre", { class: "output", "data-state": "streaming" });
    const timing = h("span", { class: "timing" });
    // the status and headers as soon as they come, then the body as it arrives
    const onHead = (head) => {
      const headerList = h("pre", { class: "headers" }, head.headers.map(([k, v]) => `${k}: ${v}`).join("\n"));
      clear(out).append(
        h("p", {}, "Status ", statusBadge(head.status), timing),
        h("details", { class: "response-headers" }, h("summary", {}, "Response headers"), headerList),
        output,
      );
      return (text) => {
        output.textContent = text;
      };
    };
    try {
      const answer = await call(method.value, target, payload, "application/json", onHead, stop.signal);
      let text = answer.text;
      if (answer.type.includes("json")) {
        try {
          text = JSON.stringify(JSON.parse(text), null, 2);
        } catch {
          /* shown as it came */
        }
      }
      output.textContent = text;
      output.dataset.state = "done";
      timing.textContent = ` in ${Math.round(answer.ms * 10) / 10} ms`;
      after();
    } catch (error) {
      if (error.name !== "AbortError") clear(out).append(errorBox(error));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export async function functionPage(ctx, name) {
  let fn = await get(fnPath(ctx, name));
  const validation = await get(`${fnPath(ctx, name)}/validation`);
  const chart = latency(ctx, name);
  const calls = invocations(ctx, name);
  const output = logs(ctx, name);
  const head = h("div", { class: "fn-head" });
  const renderHead = () =>
    clear(head).append(
      h("p", {}, "Phase ", phase(fn.status.phase), fn.status.message ? h("span", { class: "muted" }, ` ${fn.status.message}`) : ""),
      h("p", {}, "URL ", h("a", { href: fn.url }, fn.url)),
    );
  renderHead();
  const refreshAll = async () => {
    fn = await get(fnPath(ctx, name));
    renderHead();
    await Promise.all([chart.refresh(), calls.refresh(), output.refresh()]);
  };
  await Promise.all([chart.refresh(), calls.refresh(), output.refresh()]);
  ctx.every(3000, refreshAll);
  const remove = h("button", { type: "button", class: "danger" }, "Delete function");
  remove.addEventListener("click", async () => {
    if (remove.dataset.armed !== "yes") {
      remove.dataset.armed = "yes";
      remove.textContent = `Really delete ${name}?`;
      return;
    }
    await api("DELETE", fnPath(ctx, name));
    location.hash = "#/functions";
  });
  // the flagged lines of the stored code; a rejected upload is not stored: no files then
  const files = await get(`${fnPath(ctx, name)}/validation/files`).catch(() => null);
  const flagged = files ? files.files.filter((f) => f.flagged) : [];
  const validationSection = section(
    "Validation report",
    report(validation, flagged.length ? jumpTo : null),
    flagged.length ? [h("h3", {}, "Flagged files"), flagged.map(sourceView)] : null,
  );
  // what did not become Ready is explained by its report: show that first
  const serving = fn.status.phase === "Ready";
  const sections = [
    head,
    serving ? null : validationSection,
    section("Invoke", invokePanel(ctx, fn, () => setTimeout(refreshAll, 500))),
    section("Latency", chart.box),
    section("Invocations", calls.box),
    section("Logs", h("p", { class: "muted" }, "Followed as it is written (times are when the gateway read each line, UTC)."), output.box),
    serving ? validationSection : null,
    section("Spec", specList(fn.spec), h("p", {}, h("a", { href: `#/deploy/${enc(name)}` }, "Upload new code"))),
  ];
  sections.push(await versionsSection(ctx, name, fnPath(ctx, name), refreshAll));
  sections.push(section("Danger zone", remove));
  return page(`Function ${name}`, sections);
}

export async function deploy(ctx, preset) {
  const name = h("input", { type: "text", required: true, pattern: "[a-z0-9]([a-z0-9\\-]*[a-z0-9])?", maxlength: 60, autocomplete: "off", value: preset || "" });
  const runtime = h("select", {}, h("option", { value: "python3.11" }, "Python 3.11"), h("option", { value: "nodejs20" }, "Node.js 20"));
  const zipInput = h("input", { type: "file", accept: ".zip,application/zip" });
  const dirInput = h("input", { type: "file", webkitdirectory: true, multiple: true });
  const chosen = h("p", { class: "muted", "aria-live": "polite" }, "Nothing chosen yet.");
  const drop = h("div", { class: "drop", tabindex: "0", role: "group", "aria-label": "Drop a zip or a folder here" }, h("p", {}, "Drop a zip or a folder here"), chosen);
  const progress = h("progress", { max: 100, value: 0, "aria-label": "Upload progress" });
  const phases = h("ol", { class: "phases", "aria-live": "polite" });
  const result = h("div", {});
  const submit = h("button", { type: "submit" }, "Deploy");
  let source = null; // {label, make: () => Promise<Blob>}

  const choose = (label, make) => {
    source = { label, make };
    chosen.textContent = `Chosen: ${label}`;
  };
  zipInput.addEventListener("change", () => {
    const file = zipInput.files[0];
    if (file) choose(file.name, async () => file);
  });
  dirInput.addEventListener("change", () => {
    const entries = fromPicked(dirInput.files);
    if (entries.length) choose(`folder (${entries.length} files)`, () => zipFiles(entries));
  });
  // the drop zone is reachable by keyboard: Enter or Space opens the zip picker
  drop.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      zipInput.click();
    }
  });
  drop.addEventListener("dragover", (event) => {
    event.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", async (event) => {
    event.preventDefault();
    drop.classList.remove("over");
    const item = [...event.dataTransfer.items][0];
    const entry = item && item.webkitGetAsEntry ? item.webkitGetAsEntry() : null;
    if (entry && entry.isDirectory) {
      const entries = await fromDropped(entry);
      choose(`folder ${entry.name} (${entries.length} files)`, () => zipFiles(entries));
    } else if (event.dataTransfer.files[0]) {
      const file = event.dataTransfer.files[0];
      choose(file.name, async () => file);
    }
  });

  const step = (text) => phases.append(h("li", {}, text));
  const form = h(
    "form",
    { class: "deploy" },
    h("div", { class: "row" }, field("Name", name, "Lowercase letters, digits and dashes."), field("Runtime", runtime)),
    drop,
    h("div", { class: "row" }, field("…or pick a zip", zipInput), field("…or pick a folder", dirInput)),
    submit,
    field("Upload", progress),
    phases,
    result,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(phases);
    clear(result);
    if (!source) {
      result.append(errorBox({ code: "invalid", message: "choose a zip or a folder first" }));
      return;
    }
    submit.disabled = true;
    try {
      const path = fnPath(ctx, name.value);
      let existing = null;
      try {
        existing = await get(path);
      } catch (error) {
        if (error.status !== 404) throw error;
      }
      if (!existing || existing.spec.runtime !== runtime.value) {
        const spec = existing ? { ...existing.spec, runtime: runtime.value } : { runtime: runtime.value };
        delete spec.code;
        await api("PUT", path, spec);
        step(existing ? "Runtime changed" : "Function created");
      }
      const blob = await source.make();
      step(`Uploading ${source.label} (${blob.size} bytes)`);
      const answer = await upload(`${path}/upload`, blob, (done, total) => {
        progress.value = Math.round((done / total) * 100);
      });
      progress.value = 100;
      step(`Uploaded: verdict ${answer.verdict || "unchanged"}, phase ${answer.phase}`);
      if (answer.review_id) step("Held for review by the provider: it serves once approved.");
      let last = answer.phase;
      for (;;) {
        const fn = await get(path);
        if (fn.status.phase !== last) {
          last = fn.status.phase;
          step(`Phase ${last}${fn.status.message ? `: ${fn.status.message}` : ""}`);
        }
        if (SETTLED.has(last) || (answer.review_id && last === "Validating")) break;
        await new Promise((resolve) => setTimeout(resolve, 700));
      }
      result.append(
        h("p", {}, "Phase ", phase(last), " — ", h("a", { href: fnLink(name.value) }, `open ${name.value}`)),
      );
      if (last !== "Ready") result.append(report(await get(`${path}/validation`)));
    } catch (error) {
      result.append(errorBox(error));
      if (error.details && error.details.verdict) result.append(report(error.details));
    } finally {
      submit.disabled = false;
    }
  });
  return page("Deploy", form);
}

function simpleForm(fields, label, onSubmit) {
  const out = h("div", { "aria-live": "polite" });
  const submit = h("button", { type: "submit" }, label);
  const form = h("form", { class: "inline" }, fields, submit, out);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(out);
    submit.disabled = true;
    try {
      await onSubmit(out);
    } catch (error) {
      out.append(errorBox(error));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

function deleteButton(label, action) {
  const button = h("button", { type: "button", class: "danger small" }, "Delete");
  button.setAttribute("aria-label", `Delete ${label}`);
  button.addEventListener("click", async () => {
    if (button.dataset.armed !== "yes") {
      button.dataset.armed = "yes";
      button.textContent = "Confirm";
      return;
    }
    await action();
  });
  return button;
}

async function functionOptions(ctx) {
  const names = (await get(`${base(ctx)}/functions`)).functions.map((f) => f.name);
  return h("select", { required: true }, names.map((n) => h("option", { value: n }, n)));
}

export async function triggers(ctx) {
  const data = await get(`${base(ctx)}/triggers`);
  const name = h("input", { type: "text", required: true, autocomplete: "off" });
  const type = h("select", {}, h("option", { value: "http" }, "http"), h("option", { value: "cron" }, "cron"));
  const fn = await functionOptions(ctx);
  const schedule = h("input", { type: "text", placeholder: "*/5 * * * *" });
  const form = simpleForm(
    [field("Name", name), field("Type", type), field("Function", fn), field("Schedule (cron only)", schedule)],
    "Save trigger",
    async () => {
      const body = { type: type.value, function: fn.value };
      if (type.value === "cron") body.schedule = schedule.value;
      await api("PUT", `${base(ctx)}/triggers/${enc(name.value)}`, body);
      ctx.reload();
    },
  );
  return page(
    "Triggers",
    table(
      [
        { label: "Name", cell: (t) => t.name },
        { label: "Type", cell: (t) => t.spec.type },
        { label: "Function", cell: (t) => h("a", { href: fnLink(t.spec.function) }, t.spec.function) },
        { label: "Schedule", cell: (t) => t.spec.schedule || "" },
        { label: "Next", cell: (t) => when(t.status && t.status.next_tick) },
        { label: "", cell: (t) => deleteButton(t.name, async () => { await api("DELETE", `${base(ctx)}/triggers/${enc(t.name)}`); ctx.reload(); }) },
      ],
      data.triggers,
      { caption: "Triggers", empty: "No triggers." },
    ),
    section("Add or replace a trigger", h("p", { class: "muted" }, "RabbitMQ triggers: use the CLI (sless trigger put --type rabbitmq)."), form),
  );
}

export async function jobs(ctx) {
  const data = await get(`${base(ctx)}/jobs`);
  const name = h("input", { type: "text", required: true, autocomplete: "off" });
  const fn = await functionOptions(ctx);
  const payload = h("textarea", { rows: 3, spellcheck: "false" }, "{}");
  const runAgain = (job) => {
    const button = h("button", { type: "button", class: "small" }, "Run again");
    button.setAttribute("aria-label", `Run ${job.name} again`);
    button.addEventListener("click", async () => {
      button.disabled = true;
      const spec = { ...job.spec, run_id: (job.spec.run_id || 0) + 1 };
      await api("PUT", `${base(ctx)}/jobs/${enc(job.name)}`, spec);
      ctx.reload();
    });
    return button;
  };
  const form = simpleForm([field("Name", name), field("Function", fn), field("Payload (JSON)", payload)], "Run job", async () => {
    const body = { function: fn.value, run_id: 1, payload: JSON.parse(payload.value || "null") };
    const existing = data.jobs.find((j) => j.name === name.value);
    if (existing) body.run_id = (existing.spec.run_id || 0) + 1;
    await api("PUT", `${base(ctx)}/jobs/${enc(name.value)}`, body);
    ctx.reload();
  });
  return page(
    "Jobs",
    table(
      [
        { label: "Name", cell: (j) => j.name },
        { label: "Function", cell: (j) => h("a", { href: fnLink(j.spec.function) }, j.spec.function) },
        { label: "Run", cell: (j) => String(j.spec.run_id) },
        { label: "State", cell: (j) => (j.status && (j.status.state || j.status.phase)) || "" },
        { label: "", cell: (j) => [runAgain(j), " ", deleteButton(j.name, async () => { await api("DELETE", `${base(ctx)}/jobs/${enc(j.name)}`); ctx.reload(); })] },
      ],
      data.jobs,
      { caption: "Jobs", empty: "No jobs." },
    ),
    section("Run a job", form),
  );
}

export async function secrets(ctx) {
  const data = await get(`${base(ctx)}/secrets`);
  const name = h("input", { type: "text", required: true, autocomplete: "off" });
  const value = h("input", { type: "password", required: true, autocomplete: "new-password" });
  const form = simpleForm([field("Name", name), field("Value", value, "Write-only: it is never shown again, here or anywhere.")], "Set secret", async () => {
    await api("PUT", `${base(ctx)}/secrets/${enc(name.value)}`, { value: value.value });
    value.value = "";
    ctx.reload();
  });
  const replace = (s) => {
    const button = h("button", { type: "button", class: "small" }, "Replace");
    button.setAttribute("aria-label", `Replace ${s.name}`);
    button.addEventListener("click", () => {
      name.value = s.name;
      value.focus();
    });
    return button;
  };
  return page(
    "Secrets",
    table(
      [
        { label: "Name", cell: (s) => s.name },
        { label: "Updated", cell: (s) => when(s.updated_at) },
        { label: "", cell: (s) => [replace(s), " ", deleteButton(s.name, async () => { await api("DELETE", `${base(ctx)}/secrets/${enc(s.name)}`); ctx.reload(); })] },
      ],
      data.secrets,
      { caption: "Secrets", empty: "No secrets." },
    ),
    section("Set or replace a secret", form),
  );
}

export { append, notice };
