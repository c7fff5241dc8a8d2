// A function's versions and its traffic split (the API of `sless versions`, `rollback` and
// `traffic`): the versions newest first with their share of the calls, a rollback per
// version, and a form that splits the calls between the allowed versions.

import { api, get } from "./api.js";
import { h } from "./dom.js";
import { code, errorBox, notice, section, table, when } from "./ui.js";

async function putTraffic(path, split) {
  const fn = await get(path);
  const spec = { ...fn.spec };
  delete spec.code;
  spec.traffic = split;
  // If-Match: a change made meanwhile (another deploy) is not overwritten
  return api("PUT", path, spec, { "If-Match": `"${fn.resource_version}"` });
}

export async function versionsSection(ctx, name, path, after) {
  const data = await get(`${path}/versions?limit=20`);
  const versions = data.versions;
  const out = h("div", { class: "versions-result", "aria-live": "polite" });
  const rollback = (v) => {
    const button = h("button", { type: "button", class: "small" }, `Roll back to ${v.version}`);
    button.disabled = v.current || v.state !== "allowed";
    button.addEventListener("click", async () => {
      try {
        await api("POST", `${path}/rollback`, { version: v.version });
        out.replaceChildren(notice(`${v.version} serves again.`));
        after();
      } catch (error) {
        out.replaceChildren(errorBox(error));
      }
    });
    return button;
  };
  const list = table(
    [
      { label: "Version", cell: (v) => `${v.version}${v.current ? " (current)" : ""}` },
      { label: "Traffic", cell: (v) => `${v.percent}%` },
      { label: "State", cell: (v) => v.state },
      { label: "SHA256", cell: (v) => code(v.sha256.slice(0, 12)) },
      { label: "Created", cell: (v) => when(v.created_at) },
      { label: "By", cell: (v) => v.created_by || "" },
      { label: "", cell: rollback },
    ],
    versions,
    { caption: "Versions", empty: "No version yet: upload code." },
  );
  const allowed = versions.filter((v) => v.state === "allowed");
  const inputs = allowed.map((v) =>
    h("input", { type: "number", min: "0", max: "100", step: "1", value: String(v.percent), "aria-label": `Percent for ${v.version}`, "data-version": v.version }),
  );
  const form = h(
    "form",
    { class: "traffic" },
    h("fieldset", {}, h("legend", {}, "Traffic split (adds up to 100)"), inputs.map((input, i) => h("label", {}, `${allowed[i].version} `, input, " %"))),
    h("button", { type: "submit" }, "Set traffic"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const split = inputs
      .map((input) => ({ version: input.dataset.version, percent: Number(input.value) }))
      .filter((t) => t.percent > 0);
    const sum = split.reduce((a, t) => a + t.percent, 0);
    if (sum !== 100) {
      out.replaceChildren(errorBox({ code: "invalid", message: `the shares add up to ${sum}, not 100` }));
      return;
    }
    try {
      const current = versions.find((v) => v.current);
      // all of it on the current version: no split
      const body = split.length === 1 && current && split[0].version === current.version ? [] : split;
      await putTraffic(path, body);
      out.replaceChildren(notice(`traffic: ${body.map((t) => `${t.version} ${t.percent}%`).join(", ") || "no split"}`));
      after();
    } catch (error) {
      out.replaceChildren(errorBox(error));
    }
  });
  return section("Versions", h("p", { class: "muted" }, `The versions of ${name}, newest first.`), list, allowed.length > 1 ? form : null, out);
}
