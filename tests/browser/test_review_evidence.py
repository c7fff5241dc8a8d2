"""The provider's review page shows what the detonation saw, with its evidence (issue 29:
"the console shows them on the review page"): an upload held because its handler starts
a detached process is opened from the review queue, and the "Observed behaviour" section
names the rule and quotes the program it ran."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from sless.validation.detonation import unavailable
from tests.browser.test_console import OpenPage, assert_clean, sign_in
from tests.conftest import ADMIN_TOKEN, RunningGateway
from tests.integration.validation.fake_llm import FakeLLM, verdict
from tests.support import make_zip

pytestmark = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.timeout(300),
    pytest.mark.skipif(unavailable() is not None, reason=str(unavailable())),
]

#: a detached process the static rules do not see (its options are computed): only the
#: detonation, which watches the call, holds it
SPAWNS = (
    "import subprocess\n"
    "def handle(event, context):\n"
    "    options = {'start_new_' + 'session': True}\n"
    "    subprocess.Popen(['/bin/' + 'true'], **options)\n"
    "    return 'ok'\n"
)


def test_the_review_page_shows_the_detonations_evidence(
    gateway: RunningGateway, llm: FakeLLM, open_page: OpenPage
) -> None:
    llm.always(verdict("benign"))
    acme = gateway.tenant("acme")
    path = "/v1/namespaces/sless-acme/functions/spawner"
    assert acme.put(path, json={}).status_code == 201
    upload = acme.post(
        f"{path}/upload",
        content=make_zip({"handler.py": SPAWNS}),
        headers={"Content-Type": "application/zip"},
    )
    assert upload.status_code == 202, upload.text
    assert upload.json().get("review_id") is not None, upload.json()

    admin = open_page(name="admin")
    page = sign_in(admin, gateway.url, ADMIN_TOKEN)
    page.get_by_role("link", name="Review queue").click()
    page.locator("tbody tr", has_text="sless-acme/spawner").get_by_role("link").click()
    expect(
        page.get_by_role("heading", level=1, name=re.compile(r"Review #\d+: sless-acme\/spawner"))
    ).to_be_visible()
    observed = page.locator("ul.evidence li", has_text="detonation-process")
    expect(observed).to_have_count(1)
    expect(observed.locator("pre")).to_contain_text("/bin/true")
    admin.shot("review-evidence")
    assert_clean(admin)
