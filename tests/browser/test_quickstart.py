"""The README's Console section, as a new user does it: `scripts/run`, then everything
in the browser at /console/: create a tenant (admin), deploy, invoke, read logs and
invocations, approve a held upload.

The platform is the real `sless up` process started by `scripts/run` (the e2e tests'
``Platform``), with no LLM configured: the upload held for review is held by a static
rule (``py-dynamic-exec``: ``eval`` is held until a provider looks at it).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ROOT, Watched
from tests.browser.test_console import SLOW, assert_clean, sign_in
from tests.e2e.test_readme import Platform, platform  # noqa: F401 - the fixture
from tests.support import make_zip

pytestmark = [pytest.mark.e2e, pytest.mark.browser, pytest.mark.timeout(600)]

EVAL = "def handle(event, context):\n    return {'sum': eval('1 + 2')}\n"


def test_console_quickstart(platform: Platform, open_page: Callable[..., Watched]) -> None:  # noqa: F811
    printed = platform.output.read_text()
    match = re.search(r"export SLESS_ADMIN_TOKEN=(\S+)", printed)
    assert match, printed
    admin = open_page(name="admin")
    page = sign_in(admin, platform.url, match.group(1))
    page.get_by_label("Tenant name").fill("acme")
    page.get_by_role("button", name="Create tenant").click()
    token = page.get_by_label("Its token: shown once, copy it now").input_value()
    admin.shot("tenant-created")

    tenant = open_page(name="tenant")
    tpage = sign_in(tenant, platform.url, token)
    tpage.get_by_role("link", name="Deploy", exact=True).click()
    expect(tpage.get_by_role("heading", level=1, name="Deploy")).to_be_visible()
    tpage.get_by_label("Name").fill("hello")
    tpage.get_by_label("…or pick a folder").set_input_files(ROOT / "examples" / "hello-python")
    tpage.get_by_role("button", name="Deploy").click()
    expect(tpage.locator(".deploy [data-phase]")).to_have_text("Ready", timeout=SLOW)
    tpage.get_by_role("link", name="open hello").click()
    tpage.get_by_label("JSON body").fill('{"name": "Grace"}')
    tpage.get_by_role("button", name="Invoke").click()
    expect(tpage.locator(".invoke pre.output")).to_contain_text("Hello, Grace!")
    expect(tpage.locator(".invocations tbody tr")).to_have_count(1)
    expect(tpage.locator("pre.logs")).to_contain_text("greeting Grace")
    tenant.shot("hello")

    tpage.get_by_role("link", name="Deploy", exact=True).click()
    expect(tpage.get_by_role("heading", level=1, name="Deploy")).to_be_visible()
    tpage.get_by_label("Name").fill("calc")
    tpage.get_by_label("…or pick a zip").set_input_files(
        files=[
            {
                "name": "calc.zip",
                "mimeType": "application/zip",
                "buffer": make_zip({"handler.py": EVAL}),
            }
        ]
    )
    tpage.get_by_role("button", name="Deploy").click()
    expect(tpage.locator(".phases")).to_contain_text("Held for review", timeout=SLOW)
    tenant.shot("calc-held")

    page.get_by_role("link", name="Review queue").click()
    page.locator("tbody tr", has_text="sless-acme/calc").get_by_role("link").click()
    expect(page.locator("ol.source li.hit")).to_contain_text("eval('1 + 2')")
    page.get_by_label("Reason").fill("a constant expression")
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_text("Decided: approved")).to_be_visible()
    admin.shot("approved")

    tpage.get_by_role("link", name="Functions").click()
    row = tpage.locator("tbody tr", has_text="calc")
    expect(row.locator("[data-phase]")).to_have_text("Ready", timeout=SLOW)
    assert httpx.get(f"{platform.url}/fn/sless-acme/calc").json() == {"sum": 3}
    tenant.shot("functions")
    assert_clean(admin)
    assert_clean(tenant)
