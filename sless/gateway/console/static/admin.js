// The provider's views: tenants, the review queue, the audit log, platform health.

import { api, enc, get } from "./api.js";
import { lineChart } from "./chart.js";
import { clear, h } from "./dom.js";
import { code, errorBox, field, jumpTo, notice, page, report, section, sourceView, table, when } from "./ui.js";

export async function tenants(ctx) {
  const data = await get("/v1/admin/tenants");
  const name = h("input", { type: "text", required: true, autocomplete: "off", pattern: "[a-z0-9]([a-z0-9\\-]*[a-z0-9])?" });
  const out = h("div", { "aria-live": "polite" });
  const submit = h("button", { type: "submit" }, "Create tenant");
  const form = h("form", { class: "inline" }, field("Tenant name", name, "Lowercase letters, digits and dashes."), submit, out);
  const list = h("div", {});
  const render = (rows) =>
    clear(list).append(
      table(
        [
          { label: "Tenant", cell: (t) => t.tenant },
          { label: "Namespace", cell: (t) => code(t.namespace) },
          { label: "Created", cell: (t) => when(t.created_at) },
          {
            label: "",
            cell: (t) => {
              const button = h("button", { type: "button", class: "danger small" }, "Delete");
              button.setAttribute("aria-label", `Delete tenant ${t.tenant}`);
              button.addEventListener("click", async () => {
                if (button.dataset.armed !== "yes") {
                  button.dataset.armed = "yes";
                  button.textContent = `Delete ${t.tenant} and all its functions?`;
                  return;
                }
                button.disabled = true;
                await api("DELETE", `/v1/admin/tenants/${enc(t.tenant)}`);
                render((await get("/v1/admin/tenants")).tenants);
              });
              return button;
            },
          },
        ],
        rows,
        { caption: "Tenants", empty: "No tenants yet." },
      ),
    );
  render(data.tenants);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(out);
    submit.disabled = true;
    try {
      const created = await api("POST", "/v1/admin/tenants", { name: name.value });
      const token = h("input", { type: "text", readonly: true, value: created.token, class: "token", id: "new-token" });
      const copy = h("button", { type: "button", class: "small" }, "Copy");
      copy.addEventListener("click", async () => {
        token.select();
        await navigator.clipboard.writeText(created.token).catch(() => {});
        copy.textContent = "Copied";
      });
      out.append(
        notice(`Tenant ${created.tenant} created (namespace ${created.namespace}).`),
        field("Its token: shown once, copy it now", token),
        copy,
      );
      name.value = "";
      render((await get("/v1/admin/tenants")).tenants);
    } catch (error) {
      out.append(errorBox(error));
    } finally {
      submit.disabled = false;
    }
  });
  return page("Tenants", section("Create a tenant", form), section("All tenants", list));
}

export async function reviews() {
  const pending = (await get("/v1/admin/reviews")).reviews;
  const decided = (await get("/v1/admin/reviews?state=all")).reviews.filter((r) => r.state !== "pending").slice(0, 50);
  const columns = [
    { label: "Review", cell: (r) => h("a", { href: `#/admin/reviews/${r.id}` }, `#${r.id}`) },
    { label: "Function", cell: (r) => `${r.namespace}/${r.function}` },
    { label: "Findings", cell: (r) => String((r.report.findings || []).length) },
    { label: "Held since", cell: (r) => when(r.created_at) },
  ];
  return page(
    "Review queue",
    section("Held uploads", table(columns, pending, { caption: "Held uploads", empty: "Nothing is waiting for review." })),
    section(
      "Decided",
      table(
        [
          ...columns.slice(0, 2),
          { label: "Decision", cell: (r) => h("span", { class: `badge review-${r.state}` }, r.state) },
          { label: "Reason", cell: (r) => r.reason || "" },
          { label: "By", cell: (r) => r.decided_by || "" },
          { label: "When", cell: (r) => when(r.decided_at) },
        ],
        decided,
        { caption: "Decided reviews", empty: "No decisions yet." },
      ),
    ),
  );
}

// What the detonation saw the code do (issue 29), with its evidence: the bytes the sink got,
// the event, the file. Evidence is the uploader's data: shown as text, never as markup.
function observedBehaviour(data) {
  const observed = (data.findings || []).filter((f) => f.source === "detonation");
  const stage = (data.stages || []).find((s) => s.name === "detonation");
  if (!observed.length) {
    const why = stage ? `${stage.status}${stage.detail ? `: ${stage.detail}` : ""}` : "not run";
    return h("p", { class: "muted" }, `The detonation saw nothing to hold (${why}).`);
  }
  return h(
    "ul",
    { class: "evidence" },
    observed.map((f) => h("li", {}, h("strong", {}, f.rule), ` (${f.severity}): ${f.message}`, f.evidence ? h("pre", {}, f.evidence) : null)),
  );
}

export async function review(ctx, id) {
  const all = (await get("/v1/admin/reviews?state=all")).reviews;
  const item = all.find((r) => String(r.id) === String(id));
  if (!item) return page(`Review #${id}`, errorBox({ code: "not_found", message: "no such review" }));
  let files = { files: [], count: 0 };
  let filesError = null;
  try {
    files = await get(`/v1/admin/reviews/${enc(id)}/files`);
  } catch (error) {
    filesError = error;
  }
  const show = (finding) => jumpTo(finding);
  const flagged = files.files.filter((f) => f.flagged);
  const reason = h("textarea", { rows: 3, required: true, maxlength: 1000 });
  const out = h("div", { "aria-live": "polite" });
  const decide = (verb, label, cls) => {
    const button = h("button", { type: "button", class: cls }, label);
    button.addEventListener("click", async () => {
      clear(out);
      if (!reason.value.trim()) {
        out.append(errorBox({ code: "invalid", message: "give a reason: the tenant reads it" }));
        reason.focus();
        return;
      }
      try {
        const done = await api("POST", `/v1/admin/reviews/${enc(id)}/${verb}`, { reason: reason.value });
        out.append(notice(`Review #${id} ${done.state}.`));
        ctx.reload();
      } catch (error) {
        out.append(errorBox(error));
      }
    });
    return button;
  };
  const decision =
    item.state === "pending"
      ? h("div", { class: "decide" }, field("Reason", reason, "Recorded in the audit log and shown to the tenant."), h("div", { class: "row" }, decide("approve", "Approve", "ok"), decide("reject", "Reject", "danger")), out)
      : h("p", {}, `Decided: ${item.state}${item.reason ? ` — ${item.reason}` : ""} (${item.decided_by || ""})`);
  return page(
    `Review #${item.id}: ${item.namespace}/${item.function}`,
    h("p", {}, "Code ", code(item.sha256), " held since ", when(item.created_at)),
    section("Decision", decision),
    section("Report", report(item.report, show)),
    section("Observed behaviour", observedBehaviour(item.report)),
    section(
      "Flagged files",
      filesError ? errorBox(filesError) : flagged.length ? flagged.map(sourceView) : h("p", { class: "muted" }, "No finding names a file."),
      files.count ? h("details", {}, h("summary", {}, `All ${files.count} files in the upload`), h("ul", {}, files.files.map((f) => h("li", {}, code(f.path), ` ${f.size} bytes`)))) : null,
    ),
  );
}

export async function audit(ctx) {
  const params = new URLSearchParams(ctx.query);
  const namespace = h("input", { type: "text", name: "namespace", value: params.get("namespace") || "" });
  const tenant = h("input", { type: "text", name: "tenant", value: params.get("tenant") || "" });
  const action = h("input", { type: "text", name: "action", value: params.get("action") || "", placeholder: "function.put" });
  const since = h("input", { type: "datetime-local", name: "since", value: params.get("since") || "" });
  const rows = h("div", {});
  const more = h("button", { type: "button" }, "Older entries");
  let before = null;
  const entries = [];
  const load = async () => {
    const query = new URLSearchParams({ limit: "100" });
    for (const input of [namespace, tenant, action]) if (input.value.trim()) query.set(input.name, input.value.trim());
    if (since.value) query.set("since", new Date(since.value).toISOString());
    if (before) query.set("before", String(before));
    const data = await get(`/v1/admin/audit?${query}`);
    entries.push(...data.entries);
    before = data.next_before;
    more.hidden = !before;
    clear(rows).append(
      table(
        [
          { label: "When", cell: (e) => when(e.at) },
          { label: "Actor", cell: (e) => [e.actor_kind, e.tenant ? ` ${e.tenant}` : ""] },
          { label: "Action", cell: (e) => code(e.action) },
          { label: "Target", cell: (e) => [e.target_namespace || "", e.target_name ? `/${e.target_name}` : ""] },
          { label: "Status", cell: (e) => `${e.status} ${e.outcome}` },
          { label: "Detail", cell: (e) => e.detail || "" },
          { label: "Client", cell: (e) => e.client },
        ],
        entries,
        { caption: "Audit log", empty: "No entries match." },
      ),
    );
  };
  const form = h("form", { class: "filters" }, field("Namespace", namespace), field("Tenant", tenant), field("Action", action), field("Since", since), h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    entries.length = 0;
    before = null;
    await load();
  });
  more.addEventListener("click", load);
  await load();
  return page("Audit log", form, rows, more);
}

export async function health(ctx) {
  const box = h("div", { class: "health" });
  const refresh = async () => {
    const data = await get("/v1/admin/stats?window_s=3600&step_s=60");
    const pending = (await get("/v1/admin/reviews")).count;
    const to = Date.now();
    const mid = (b) => Date.parse(b.at) + data.step_s * 500;
    const sum = (rows, key) => rows.reduce((n, r) => n + r[key], 0);
    const inv = data.invocations;
    const val = data.validations;
    clear(box).append(
      h(
        "ul",
        { class: "figures" },
        h("li", {}, h("strong", {}, String(sum(inv, "count"))), " invocations in the last hour"),
        h("li", {}, h("strong", {}, String(sum(inv, "errors"))), " errors"),
        h("li", {}, h("strong", {}, String(sum(val, "allow") + sum(val, "review") + sum(val, "reject"))), " uploads validated"),
        h("li", {}, h("a", { href: "#/admin/reviews" }, h("strong", {}, String(pending)), " waiting for review")),
      ),
      lineChart({
        title: "Invocations and errors per minute",
        integer: true,
        from: to - 3600 * 1000,
        to,
        series: [
          { label: "invocations", points: inv.map((b) => [mid(b), b.count]) },
          { label: "errors", points: inv.map((b) => [mid(b), b.errors]) },
        ],
      }),
      lineChart({
        title: "Validation verdicts per minute",
        integer: true,
        from: to - 3600 * 1000,
        to,
        series: ["allow", "review", "reject"].map((key) => ({ label: key, points: val.map((b) => [mid(b), b[key]]) })),
      }),
    );
  };
  await refresh();
  ctx.every(10000, refresh);
  return page("Platform health", box);
}
