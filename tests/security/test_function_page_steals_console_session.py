"""Attack: a tenant's function serves a web page, on the same origin as the console and
every other tenant's functions (``/fn/{ns}/{name}`` and ``/console/`` share one host).
Its script then reads what that origin keeps: the console's token in ``sessionStorage``
(when the page opens in the tab where someone signed in), and registers a service worker
with ``Service-Worker-Allowed: /`` so that it answers every later request of that browser
to ``/console/`` and ``/v1/``: every token typed there, forever.

A real browser (Debian's Chromium, tests/browser/conftest.py) signs in to the console as
the victim, then opens the attacker's page in the same tab.
"""

from __future__ import annotations

import json

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.test_console import OpenPage, sign_in
from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(300)]

PAGE = """<!doctype html><html><head><title>waiting</title></head><body><script>
let got = "none";
try { got = sessionStorage.getItem("sless.token") || "empty"; } catch (e) { got = "blocked"; }
let cookies = "none";
try { cookies = document.cookie || "empty"; } catch (e) { cookies = "blocked"; }
document.title = "token:" + got;
document.body.dataset.cookies = cookies;
(async () => {
  try {
    await navigator.serviceWorker.register("/fn/sless-mallory/page/sw.js", {scope: "/"});
    await navigator.serviceWorker.ready;
    document.body.dataset.sw = "registered";
  } catch (e) {
    document.body.dataset.sw = "refused";
  }
})();
</script></body></html>"""

WORKER = """self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (e) => e.respondWith(new Response(
  "<title>owned</title>owned", {headers: {"Content-Type": "text/html"}})));
"""

HANDLER = f"""
PAGE = {json.dumps(PAGE)}
WORKER = {json.dumps(WORKER)}


def handle(event, context):
    if event["path"].endswith("/sw.js"):
        headers = {{"Content-Type": "text/javascript", "Service-Worker-Allowed": "/"}}
        return {{"statusCode": 200, "headers": headers, "body": WORKER}}
    headers = {{
        "Content-Type": "text/html",
        "Set-Cookie": "planted=1; Path=/; Domain=127.0.0.1",
    }}
    return {{"statusCode": 200, "headers": headers, "body": PAGE}}
"""


def test_a_function_page_gets_nothing_of_the_console_or_the_origin(
    gateway: RunningGateway, open_page: OpenPage
) -> None:
    mallory = gateway.tenant("mallory")
    deployed = deploy(mallory, "sless-mallory", "page", {"handler.py": HANDLER}, {"auth": "public"})
    assert deployed["status"]["phase"] == "Ready", deployed["status"]
    victim = gateway.admin.post("/v1/admin/tenants", json={"name": "victim"}).json()["token"]

    watched = open_page()
    page = sign_in(watched, gateway.url, victim)
    page.goto(f"{gateway.url}/fn/sless-mallory/page")
    expect(page.locator("body[data-sw]")).to_have_count(1, timeout=30_000)
    watched.shot("attacker-page")
    assert victim not in page.title()
    assert page.title() == "token:blocked", page.title()
    assert page.locator("body").get_attribute("data-sw") == "refused"

    # the console still answers as itself, and nothing of the attacker's stayed behind
    page.goto(f"{gateway.url}/console/")
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    assert page.evaluate("navigator.serviceWorker.controller") is None
    assert page.evaluate("navigator.serviceWorker.getRegistrations().then(r => r.length)") == 0
    # the function's cookie is its own: sent to its path only, never to the console's
    planted = [c for c in page.context.cookies() if c["name"] == "planted"]
    assert [c["path"] for c in planted] == ["/fn/sless-mallory/page"], planted


def test_a_service_worker_script_is_never_fetched_from_a_function(
    gateway: RunningGateway,
) -> None:
    """Even from a page that could register one, the script fetch itself is refused: the
    browser marks it ``Service-Worker: script`` (the Service Workers spec)."""
    mallory = gateway.tenant("mallory")
    deploy(mallory, "sless-mallory", "page", {"handler.py": HANDLER}, {"auth": "public"})
    url = f"{gateway.url}/fn/sless-mallory/page/sw.js"
    fetched = httpx.get(url, headers={"Service-Worker": "script"}, timeout=30)
    assert fetched.status_code == 403, fetched.text
    assert "service-worker-allowed" not in fetched.headers
    assert "owned" not in fetched.text
    # the same URL as a plain request reaches the function, without the header
    plain = httpx.get(url, timeout=30)
    assert plain.status_code == 200
    assert "owned" in plain.text
    assert "service-worker-allowed" not in plain.headers
    assert plain.headers["content-security-policy"].startswith("sandbox allow-scripts")
