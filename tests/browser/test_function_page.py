"""The console's function pages, issue 31's parts: the log followed through the API's
stream, the Versions section with its traffic split and rollbacks, the paged invocation
list with the error column of a 500, instance counts and call totals in the function
list, and a refused first upload listed as Rejected. A real browser against a real
platform, as test_console.py.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import httpx
import pytest
from playwright.sync_api import expect

from sless.gateway.routers import logs as log_routes
from tests.browser.conftest import Watched
from tests.browser.test_console import SLOW, assert_clean, sign_in
from tests.conftest import RunningGateway
from tests.integration.validation.fake_llm import FakeLLM, verdict
from tests.support import deploy, make_zip

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(300)]

OpenPage = Callable[..., Watched]


def _handler(greeting: str) -> dict[str, str | bytes]:
    return {
        "handler.py": (
            "def handle(event, context):\n"
            "    name = event['query'].get('name', 'world')\n"
            "    print('greeting', name)\n"
            "    if name == 'boom':\n"
            "        raise RuntimeError('kaboom')\n"
            f"    return {{'message': '{greeting}, ' + name}}\n"
        )
    }


def test_function_page_streams_logs_pages_calls_and_splits_traffic(
    gateway: RunningGateway, llm: FakeLLM, open_page: OpenPage
) -> None:
    llm.always(verdict("benign"))
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()
    acme = gateway.client(created["token"])
    deploy(acme, "sless-acme", "hello", _handler("Hello"))
    deploy(acme, "sless-acme", "hello", _handler("Howdy"))  # v2
    fn_url = f"{gateway.url}/fn/sless-acme/hello"
    for i in range(23):
        assert httpx.get(fn_url, params={"name": f"n{i}"}).status_code == 200
    assert httpx.get(fn_url, params={"name": "boom"}).status_code == 500
    # a function whose only upload validation refused
    path = "/v1/namespaces/sless-acme/functions/broken"
    acme.put(path, json={"runtime": "python3.11"})
    refused = acme.post(
        path + "/upload",
        content=make_zip({"handler.py": "def handle(event, context):\n    return {{\n"}),
        headers={"Content-Type": "application/zip"},
    )
    assert refused.status_code == 422

    watched = open_page()
    page = sign_in(watched, gateway.url, created["token"])
    row = page.locator("tbody tr", has_text="hello")
    expect(row.locator("td").nth(3)).to_have_text(re.compile(r"^[1-9]\d*$"))  # instances
    expect(row.locator("td").nth(4)).to_have_text("24")  # calls since the gateway started
    broken = page.locator("tbody tr", has_text="broken")
    expect(broken.locator("[data-phase]")).to_have_text("Rejected")
    watched.shot("functions-counts")

    page.get_by_role("link", name="hello", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Function hello")).to_be_visible()

    # the invocation list: 20 a page, newest first, the 500's error shown
    rows = page.locator(".invocations tbody tr")
    expect(rows).to_have_count(20, timeout=SLOW)
    expect(rows.first).to_contain_text("500")
    expect(rows.first.locator("td").nth(4)).to_have_text("the function answered 500 (see its logs)")
    page.get_by_role("button", name="Older").click()
    expect(rows).to_have_count(4)
    expect(page.get_by_role("button", name="Older")).to_be_disabled()
    page.get_by_role("button", name="Newer").click()
    expect(rows).to_have_count(20)

    # the log stream: the backlog, then a new line with its time and its call's id
    logs = page.locator("pre.logs")
    expect(logs).to_contain_text("greeting n22")
    assert httpx.get(fn_url, params={"name": "live-line"}).status_code == 200
    live = logs.locator("span.live", has_text="greeting live-line")
    expect(live).to_have_text(
        re.compile(r"^\d\d:\d\d:\d\d\.\d{3}Z \[[0-9a-f-]{36}\] greeting live-line")
    )
    # a traceback names its call
    failed = httpx.get(fn_url, params={"name": "boom"})
    call = failed.headers["x-sless-invocation-id"]
    expect(logs).to_contain_text(f"[{call}] Traceback")

    # versions: v2 current, then a 50/50 split, then a rollback to v1
    versions = page.locator("table", has=page.locator("caption", has_text="Versions"))
    expect(versions.locator("tbody tr")).to_have_count(2)
    expect(versions.locator("tbody tr").first).to_contain_text("v2 (current)")
    expect(versions.locator("tbody tr").first).to_contain_text("100%")
    page.get_by_label("Percent for v2").fill("50")
    page.get_by_label("Percent for v1").fill("40")
    page.get_by_role("button", name="Set traffic").click()
    expect(page.locator(".versions-result")).to_contain_text("add up to 90")
    page.get_by_label("Percent for v1").fill("50")
    page.get_by_role("button", name="Set traffic").click()
    expect(page.locator(".versions-result")).to_contain_text("traffic: v2 50%, v1 50%")
    spec = acme.get("/v1/namespaces/sless-acme/functions/hello").json()["spec"]
    assert sorted((t["version"], t["percent"]) for t in spec["traffic"]) == [
        ("v1", 50),
        ("v2", 50),
    ]
    watched.shot("function-versions")
    page.get_by_role("button", name="Roll back to v1").click()
    expect(page.locator(".versions-result")).to_contain_text("v1 serves again")
    function = acme.get("/v1/namespaces/sless-acme/functions/hello").json()
    assert function["spec"]["code"]["version"] == "v1"
    assert function["spec"]["traffic"] == []

    # leaving the page closes its log stream (the gateway gives its place back)
    assert log_routes._open["sless-acme"] >= 1
    page.get_by_role("link", name="Functions").click()
    expect(page.get_by_role("heading", level=1, name="Functions")).to_be_visible()
    for _ in range(200):
        if log_routes._open["sless-acme"] == 0:
            break
        time.sleep(0.1)
    assert log_routes._open["sless-acme"] == 0
    assert_clean(watched)
