"""The console in a real browser against a real platform (gateway, PostgreSQL, semgrep,
the sandbox); the model is the local fake LLM server, the only fake allowed.

Each test signs in through the sign-in form and works the way a user does: by labels,
buttons and links. Waiting is Playwright's ``expect``, which polls until the page shows
what it should (no timed assertions). Screenshots of each page are saved (see
conftest.py) to be looked at.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE, ROOT, Watched
from tests.conftest import ADMIN_TOKEN, RunningGateway
from tests.integration.validation.fake_llm import FakeLLM, verdict
from tests.support import make_zip

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(300)]

OpenPage = Callable[..., Watched]
SLOW = 120_000  # ms: a first build installs a virtualenv; expect() polls until then


def sign_in(watched: Watched, url: str, token: str) -> Page:
    page = watched.page
    page.goto(f"{url}/console/")
    expect(page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    return page


def assert_clean(watched: Watched) -> None:
    assert watched.dialogs == [], watched.dialogs
    assert watched.errors == [], watched.errors
    assert watched.csp_violations() == []


def token_nowhere_but_session(page: Page, token: str) -> None:
    assert token not in page.url
    cookies = page.context.cookies()
    assert all(token not in c["value"] for c in cookies)
    assert page.evaluate("sessionStorage.getItem('sless.token')") == token
    assert page.evaluate("localStorage.length") == 0


def test_tenant_deploys_invokes_and_reads(
    gateway: RunningGateway, llm: FakeLLM, open_page: OpenPage
) -> None:
    llm.always(verdict("benign"))
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()
    watched = open_page()
    page = sign_in(watched, gateway.url, created["token"])
    token_nowhere_but_session(page, created["token"])
    expect(page.get_by_role("heading", level=1, name="Functions")).to_be_visible()
    watched.shot("functions-empty")

    page.get_by_role("link", name="Deploy", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Deploy")).to_be_visible()
    page.get_by_label("Name").fill("hello-python")
    page.get_by_label("…or pick a folder").set_input_files(ROOT / "examples" / "hello-python")
    expect(page.get_by_text("Chosen: folder (1 files)")).to_be_visible()
    page.get_by_role("button", name="Deploy").click()
    expect(page.locator(".deploy [data-phase]")).to_have_text("Ready", timeout=SLOW)
    expect(page.get_by_label("Upload progress")).to_have_attribute("value", "100")
    watched.shot("deploy-ready")

    page.get_by_role("link", name="open hello-python").click()
    expect(page.get_by_role("heading", level=1, name="Function hello-python")).to_be_visible()
    page.get_by_label("JSON body").fill('{"name": "Ada"}')
    page.get_by_role("button", name="Invoke").click()
    expect(page.locator(".invoke pre.output")).to_contain_text('"message": "Hello, Ada!"')
    # the answer's time and headers (issue 31)
    expect(page.locator(".invoke .timing")).to_have_text(re.compile(r"^ in \d+(\.\d)? ms$"))
    page.locator(".invoke details.response-headers summary").click()
    expect(page.locator(".invoke pre.headers")).to_contain_text("x-sless-invocation-id: ")
    # the invocation reaches the list, the chart and the logs (they refresh on their own)
    expect(page.locator(".invocations tbody tr")).to_have_count(1)
    expect(page.locator(".invocations tbody tr").first).to_contain_text("200")
    expect(page.locator("svg.chart .s0 circle")).to_have_count(1)
    expect(page.locator("svg.chart .s1 circle")).to_have_count(1)
    expect(page.locator("pre.logs")).to_contain_text("greeting Ada")
    page.get_by_label("Show").select_option("error")
    expect(page.locator(".invocations")).to_contain_text("No invocations.")
    page.get_by_label("Show").select_option("all")
    watched.shot("function")

    page.get_by_role("link", name="Functions").click()
    row = page.locator("tbody tr", has_text="hello-python")
    expect(row.locator("[data-phase]")).to_have_text("Ready")
    expect(row).to_contain_text(f"{gateway.url}/fn/sless-acme/hello-python")
    watched.shot("functions")

    page.get_by_role("link", name="Secrets").click()
    expect(page.get_by_role("heading", level=1, name="Secrets", exact=True)).to_be_visible()
    page.get_by_label("Name").fill("api-key")
    page.get_by_label("Value").fill("s3cr3t-value-never-shown")
    page.get_by_role("button", name="Set secret").click()
    expect(page.locator("tbody")).to_contain_text("api-key")
    assert "s3cr3t-value-never-shown" not in page.content()
    watched.shot("secrets")

    page.get_by_role("link", name="Jobs").click()
    expect(page.get_by_role("heading", level=1, name="Jobs", exact=True)).to_be_visible()
    page.get_by_label("Name").fill("nightly")
    page.get_by_role("button", name="Run job").click()
    expect(page.locator("tbody tr", has_text="nightly")).to_contain_text("1")
    page.get_by_role("button", name="Run nightly again").click()
    expect(page.locator("tbody tr", has_text="nightly").locator("td").nth(2)).to_have_text("2")
    watched.shot("jobs")

    page.get_by_role("link", name="Triggers").click()
    expect(page.get_by_role("heading", level=1, name="Triggers", exact=True)).to_be_visible()
    page.get_by_label("Name").fill("every-5-min")
    page.get_by_label("Type").select_option("cron")
    page.get_by_label("Schedule (cron only)").fill("*/5 * * * *")
    page.get_by_role("button", name="Save trigger").click()
    expect(page.locator("tbody tr", has_text="every-5-min")).to_contain_text("*/5 * * * *")
    watched.shot("triggers")

    phone = open_page(PHONE, name="phone")
    sign_in(phone, gateway.url, created["token"])
    phone.page.goto(f"{gateway.url}/console/#/functions/hello-python")
    expect(phone.page.locator(".invocations tbody tr").first).to_be_visible()
    phone.shot("function-phone")
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways at phone width ({width}px)"

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0
    assert_clean(watched)
    assert_clean(phone)


def test_admin_creates_a_tenant_and_approves_a_held_upload(
    gateway: RunningGateway, llm: FakeLLM, open_page: OpenPage
) -> None:
    admin = open_page(name="admin")
    page = sign_in(admin, gateway.url, ADMIN_TOKEN)
    expect(page.get_by_role("heading", level=1, name="Tenants")).to_be_visible()
    page.get_by_label("Tenant name").fill("acme")
    page.get_by_role("button", name="Create tenant").click()
    token = page.get_by_label("Its token: shown once, copy it now").input_value()
    assert token.startswith("sl_")
    expect(page.locator("tbody tr", has_text="acme")).to_contain_text("sless-acme")
    admin.shot("tenants")

    llm.always(verdict("suspicious", [{"file": "handler.py", "line": 3, "reason": "odd call"}]))
    tenant = open_page(name="tenant")
    tpage = sign_in(tenant, gateway.url, token)
    tpage.get_by_role("link", name="Deploy", exact=True).click()
    expect(tpage.get_by_role("heading", level=1, name="Deploy")).to_be_visible()
    tpage.get_by_label("Name").fill("held")
    source = "def handle(event, context):\n    x = 1\n    return {'approved': x}\n"
    tpage.get_by_label("…or pick a zip").set_input_files(
        files=[
            {
                "name": "held.zip",
                "mimeType": "application/zip",
                "buffer": make_zip({"handler.py": source}),
            }
        ]
    )
    tpage.get_by_role("button", name="Deploy").click()
    expect(tpage.locator(".phases")).to_contain_text("Held for review", timeout=SLOW)
    tenant.shot("deploy-held")
    # the tenant sees its own flagged line, linked from the finding
    tpage.get_by_role("link", name="open held").click()
    expect(tpage.locator("ol.source li.hit")).to_have_attribute("data-line", "3")
    tpage.get_by_role("button", name="handler.py:3").click()
    expect(tpage.locator("ol.source li.hit")).to_be_focused()
    tenant.shot("function-held")

    page.get_by_role("link", name="Review queue").click()
    row = page.locator("tbody tr", has_text="sless-acme/held")
    expect(row).to_be_visible()
    admin.shot("review-queue")
    row.get_by_role("link").click()
    expect(
        page.get_by_role("heading", level=1, name=re.compile(r"Review #\d+: sless-acme\/held"))
    ).to_be_visible()
    hit = page.locator("ol.source li.hit")
    expect(hit).to_have_count(1)
    expect(hit).to_have_attribute("data-line", "3")
    expect(hit).to_contain_text("return {'approved': x}")
    page.get_by_role("button", name="handler.py:3").click()
    expect(hit).to_be_focused()
    admin.shot("review")
    page.get_by_label("Reason").fill("looked at it: harmless")
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_text("Decided: approved — looked at it: harmless")).to_be_visible()

    tpage.get_by_role("link", name="Functions").click()
    expect(tpage.locator("tbody tr", has_text="held").locator("[data-phase]")).to_have_text(
        "Ready", timeout=SLOW
    )
    assert httpx.get(f"{gateway.url}/fn/sless-acme/held").json() == {"approved": 1}
    tenant.shot("functions-approved")

    page.get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("heading", level=1, name="Audit log")).to_be_visible()
    page.get_by_label("Action").fill("review.approve")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(page.locator("tbody tr")).to_contain_text("looked at it: harmless")
    admin.shot("audit")

    page.get_by_role("link", name="Health").click()
    expect(page.locator(".figures")).to_contain_text("1 uploads validated")
    expect(page.locator("svg.chart").nth(1).locator(".s1 circle")).to_have_count(1)
    admin.shot("health")
    assert_clean(admin)
    assert_clean(tenant)


HOSTILE = "<script>alert('x')</script>\"><img src=x onerror=alert(1)> javascript:alert(2)"
HOSTILE_FILE = 'notes/"><img src=x onerror=alert(3)>.py'


def test_hostile_tenant_data_is_only_text(
    gateway: RunningGateway, llm: FakeLLM, open_page: OpenPage
) -> None:
    acme = gateway.tenant("acme")
    fn = "/v1/namespaces/sless-acme/functions"
    llm.always(verdict("benign"))
    loud = (
        "PAYLOAD = " + repr(HOSTILE) + "\n"
        "def handle(event, context):\n"
        "    print(PAYLOAD)\n"
        "    return {'statusCode': 500, 'body': PAYLOAD}\n"
    )
    env = {"env": {"GREETING": HOSTILE}}
    assert acme.put(f"{fn}/loud", json=env).status_code in (200, 201)
    assert acme.post(f"{fn}/loud/upload", content=make_zip({"handler.py": loud})).status_code == 202

    llm.always(
        verdict(
            "suspicious",
            [
                {"file": HOSTILE_FILE, "line": 1, "reason": HOSTILE},
                {"file": "handler.py", "line": 1, "reason": HOSTILE},
            ],
        )
    )
    acme.put(f"{fn}/shady", json={})
    files = {
        "handler.py": "def handle(e, c):\n    return 1\n",
        HOSTILE_FILE: f"NOTE = {HOSTILE!r}\n",
    }
    shady = acme.post(f"{fn}/shady/upload", content=make_zip(files))
    assert shady.status_code == 202, shady.text
    review_id = shady.json()["review_id"]
    decided = gateway.admin.post(f"/v1/admin/reviews/{review_id}/reject", json={"reason": HOSTILE})
    assert decided.status_code == 200, decided.text

    tenant = open_page(name="tenant")
    page = sign_in(tenant, gateway.url, acme.headers["Authorization"].removeprefix("Bearer "))
    expect(page.locator("tbody tr", has_text="loud").locator("[data-phase]")).to_have_text(
        "Ready", timeout=SLOW
    )
    page.goto(f"{gateway.url}/console/#/functions/loud")
    page.get_by_role("button", name="Invoke").click()
    expect(page.locator(".invoke pre.output")).to_contain_text(HOSTILE)
    expect(page.locator("pre.logs")).to_contain_text(HOSTILE)
    expect(page.locator(".invocations tbody tr")).to_have_count(1)
    tenant.shot("function-loud")
    page.goto(f"{gateway.url}/console/#/functions/shady")
    expect(page.locator(".fn-head")).to_contain_text(HOSTILE)
    expect(page.locator(".report .finding-message").first).to_contain_text(HOSTILE)
    tenant.shot("function-shady")

    admin = open_page(name="admin")
    apage = sign_in(admin, gateway.url, ADMIN_TOKEN)
    apage.goto(f"{gateway.url}/console/#/admin/reviews/{review_id}")
    expect(apage.locator(".report")).to_contain_text(HOSTILE)
    flagged = apage.locator(".file", has_text=HOSTILE_FILE)
    expect(flagged.locator("li.hit")).to_have_text(f"1NOTE = {HOSTILE!r}")
    apage.get_by_role("button", name=f"{HOSTILE_FILE}:1").click()
    expect(flagged.locator("li.hit")).to_be_focused()
    expect(apage.get_by_text(f"Decided: rejected — {HOSTILE}", exact=False)).to_be_visible()
    admin.shot("review")
    apage.goto(f"{gateway.url}/console/#/admin/reviews")
    expect(apage.locator("tbody")).to_contain_text(HOSTILE)
    admin.shot("reviews")
    apage.goto(f"{gateway.url}/console/#/admin/audit")
    expect(apage.locator("tbody")).to_contain_text(HOSTILE[:60])
    admin.shot("audit")

    for watched in (tenant, admin):
        assert watched.page.locator("img").count() == 0
        assert watched.page.locator("a[href^='javascript']").count() == 0
        assert_clean(watched)


def test_a_refused_first_upload_reads_rejected_in_the_list(
    gateway: RunningGateway, open_page: OpenPage
) -> None:
    """The console shows the phase the API says (it decides, issue 31): a function whose
    only upload validation refused is Rejected, one that serves is Ready."""
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()
    acme = gateway.client(created["token"])
    path = "/v1/namespaces/sless-acme/functions/broken"
    assert acme.put(path, json={}).status_code == 201
    refused = acme.post(
        path + "/upload",
        content=make_zip({"handler.py": "def handle(event, context):\n    return {{\n"}),
        headers={"Content-Type": "application/zip"},
    )
    assert refused.status_code == 422, refused.text
    assert acme.get(path).json()["status"]["phase"] == "Rejected"
    watched = open_page()
    page = sign_in(watched, gateway.url, created["token"])
    row = page.locator("tbody tr", has_text="broken")
    expect(row.locator("[data-phase]")).to_have_text("Rejected")
    assert_clean(watched)
