"""The console's invoke panel shows a streamed answer as it arrives (issue 34): the first
chunk is on the page while the handler is still held, the rest once it is let go."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.test_console import OpenPage, assert_clean, sign_in
from tests.conftest import RunningGateway
from tests.integration.validation.fake_llm import FakeLLM, verdict
from tests.support import deploy

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(300)]

#: ``?hold=1`` keeps the stream open after its first chunk until ``/release`` is called
#: (the same worker: one instance, two calls at once); any other call ends at once
HANDLER = """
import os
import time


def handle(event, context):
    if event["path"].endswith("/release"):
        open("/tmp/release", "w").close()
        return "released"
    hold = bool(event["query"].get("hold"))

    def chunks():
        yield "first chunk\\n"
        while hold and not os.path.exists("/tmp/release"):
            time.sleep(0.05)
        yield "second chunk\\n"

    return {"statusCode": 200, "headers": {"Content-Type": "text/plain"}, "body": chunks()}
"""


def test_the_invoke_panel_shows_a_stream_as_it_arrives(
    gateway: RunningGateway, llm: FakeLLM, open_page: OpenPage
) -> None:
    llm.always(verdict("benign"))
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()
    acme = gateway.client(created["token"])
    spec = {"auth": "public", "concurrency": 2, "max_instances": 1}
    deployed = deploy(acme, "sless-acme", "ticker", {"handler.py": HANDLER}, spec)
    assert deployed["status"]["phase"] == "Ready", deployed["status"]

    watched = open_page()
    page = sign_in(watched, gateway.url, created["token"])
    page.goto(f"{gateway.url}/console/#/functions/ticker")
    page.get_by_label("Method").select_option("GET")
    page.get_by_label("Path").fill("?hold=1")
    page.get_by_role("button", name="Invoke").click()
    output = page.locator(".invoke pre.output")
    expect(output).to_have_text("first chunk\n")
    expect(output).to_have_attribute("data-state", "streaming")
    expect(page.locator(".invoke .response")).to_contain_text("Status")
    watched.shot("first-chunk")

    released = httpx.get(f"{gateway.url}/fn/sless-acme/ticker/release", timeout=30)
    assert released.status_code == 200, released.text
    expect(output).to_have_text("first chunk\nsecond chunk\n")
    expect(output).to_have_attribute("data-state", "done")
    expect(page.locator(".invoke .timing")).to_contain_text(" ms")
    watched.shot("whole-stream")
    assert_clean(watched)
