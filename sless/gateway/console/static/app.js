// The console's shell: sign-in, navigation and a hash router. Views are async functions
// that return nodes; timers a view starts are stopped when the route changes.

import * as admin from "./admin.js";
import { get, session, whenUnauthorized } from "./api.js";
import { clear, h } from "./dom.js";
import * as tenant from "./tenant.js";
import { errorBox, field, page } from "./ui.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
const status = document.getElementById("status");

let me = null;
let timers = [];
let generation = 0;
let shownPath = null;

const TENANT_ROUTES = [
  [/^\/functions$/, (ctx) => tenant.functions(ctx)],
  [/^\/functions\/([^/]+)$/, (ctx, name) => tenant.functionPage(ctx, decodeURIComponent(name))],
  [/^\/deploy(?:\/([^/]+))?$/, (ctx, name) => tenant.deploy(ctx, name ? decodeURIComponent(name) : "")],
  [/^\/triggers$/, (ctx) => tenant.triggers(ctx)],
  [/^\/jobs$/, (ctx) => tenant.jobs(ctx)],
  [/^\/secrets$/, (ctx) => tenant.secrets(ctx)],
];
const ADMIN_ROUTES = [
  [/^\/admin\/tenants$/, (ctx) => admin.tenants(ctx)],
  [/^\/admin\/reviews$/, (ctx) => admin.reviews(ctx)],
  [/^\/admin\/reviews\/(\d+)$/, (ctx, id) => admin.review(ctx, id)],
  [/^\/admin\/audit$/, (ctx) => admin.audit(ctx)],
  [/^\/admin\/health$/, (ctx) => admin.health(ctx)],
];
const TENANT_NAV = [
  ["#/functions", "Functions"],
  ["#/deploy", "Deploy"],
  ["#/triggers", "Triggers"],
  ["#/jobs", "Jobs"],
  ["#/secrets", "Secrets"],
];
const ADMIN_NAV = [
  ["#/admin/tenants", "Tenants"],
  ["#/admin/reviews", "Review queue"],
  ["#/admin/audit", "Audit log"],
  ["#/admin/health", "Health"],
];

let leaving = [];

function stopTimers() {
  for (const timer of timers) clearInterval(timer);
  timers = [];
  for (const stop of leaving) stop();
  leaving = [];
}

function signOut(message) {
  session.signOut();
  me = null;
  shownPath = null;
  stopTimers();
  clear(nav);
  clear(who);
  history.replaceState(null, "", location.pathname);
  showSignIn(message);
}

function showSignIn(message) {
  const token = h("input", { type: "password", required: true, autocomplete: "off", spellcheck: "false", id: "token" });
  const submit = h("button", { type: "submit" }, "Sign in");
  const out = h("div", { "aria-live": "polite" }, message ? errorBox({ code: "signed_out", message }) : null);
  const form = h(
    "form",
    { class: "signin" },
    field("Token", token, "A tenant token, or the provider admin token. Kept in this tab only, until you sign out."),
    submit,
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(out);
    session.signIn(token.value.trim());
    token.value = "";
    try {
      await start();
    } catch (error) {
      session.signOut();
      out.append(errorBox(error));
    }
  });
  clear(main).append(...page("Sign in", form));
  token.focus();
}

function renderChrome() {
  const links = me.admin ? ADMIN_NAV : TENANT_NAV;
  clear(nav).append(h("ul", {}, links.map(([href, label]) => h("li", {}, h("a", { href }, label)))));
  const out = h("button", { type: "button", class: "small", id: "sign-out" }, "Sign out");
  out.addEventListener("click", () => signOut());
  clear(who).append(h("span", { class: "muted" }, me.admin ? "provider admin" : `tenant ${me.tenant}`), " ", out);
}

function markCurrent(path) {
  for (const link of nav.querySelectorAll("a")) {
    const current = path === link.getAttribute("href").slice(1) || path.startsWith(`${link.getAttribute("href").slice(1)}/`);
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

async function route() {
  if (!me) return;
  stopTimers();
  generation += 1;
  const mine = generation;
  const [path, query = ""] = (location.hash.slice(1) || "").split("?");
  const routes = me.admin ? ADMIN_ROUTES : TENANT_ROUTES;
  const fallback = me.admin ? "#/admin/tenants" : "#/functions";
  const match = routes.map(([pattern, view]) => [path.match(pattern), view]).find(([m]) => m);
  if (!match) {
    location.replace(fallback);
    return;
  }
  const [found, view] = match;
  const ctx = {
    ns: me.namespace,
    query,
    every(ms, fn) {
      timers.push(setInterval(() => fn().catch((error) => console.warn("refresh failed:", error.message)), ms));
    },
    // ``stop`` runs when the route changes (an open log stream is closed)
    onLeave(stop) {
      leaving.push(stop);
    },
    reload: () => route(),
  };
  markCurrent(path);
  try {
    const nodes = await view(ctx, ...found.slice(1));
    if (mine !== generation) return;
    clear(main).append(...nodes);
  } catch (error) {
    if (mine !== generation) return;
    clear(main).append(...page("Something went wrong", errorBox(error)));
  }
  const title = document.getElementById("page-title");
  if (title) {
    document.title = `${title.textContent} · sless console`;
    status.textContent = title.textContent;
    // a new page moves focus to its title (screen readers announce it); a reload does not
    if (path !== shownPath) title.focus();
    shownPath = path;
  }
}

async function start() {
  me = await get("/v1/whoami");
  renderChrome();
  if (!location.hash) location.replace(me.admin ? "#/admin/tenants" : "#/functions");
  else await route();
}

whenUnauthorized(() => {
  if (me) signOut("Your token was refused: sign in again.");
});
window.addEventListener("hashchange", route);
if (session.token) start().catch(() => signOut("Your token was refused: sign in again."));
else showSignIn();
