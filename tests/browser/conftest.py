"""A real browser for the console tests: Debian's Chromium, driven by Playwright.

Playwright never downloads a browser here: it launches the system ``chromium``
(``scripts/test`` installs it with apt-get) through ``executable_path``. Every page
records what must never happen: a JavaScript dialog, an uncaught error, a
Content-Security-Policy violation. Screenshots go to ``.test-output/browser/<test>/``
(or ``$SLESS_TEST_OUTPUT/browser/<test>/``), kept after the run to be looked at.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, sync_playwright

from sless.config import Settings
from tests.integration.validation.fake_llm import FakeLLM
from tests.support import with_llm

ROOT = Path(__file__).resolve().parents[2]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# records every CSP violation the page sees (init scripts run before the page's own)
CSP_PROBE = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("Chromium is not installed: apt-get install chromium (scripts/test does)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # per module, not per session: Playwright's sync API runs its own event loop, which
    # must be gone before the suite's asyncio tests (other folders) run in this thread
    with sync_playwright() as playwright:
        # --no-sandbox: the tests run as root, where Chromium's own sandbox cannot start
        launched = playwright.chromium.launch(
            executable_path=chromium_path(), args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        yield launched
        launched.close()


@dataclass
class Watched:
    """A page and everything it must not do."""

    page: Page
    shots: Path
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    count: int = 0

    def shot(self, name: str) -> Path:
        self.count += 1
        path = self.shots / f"{self.count:02d}-{name}.png"
        self.page.screenshot(path=path, full_page=True)
        return path

    def csp_violations(self) -> list[str]:
        found: list[str] = self.page.evaluate("window.__cspViolations || []")
        return found + [m for m in self.console_errors if "Content Security Policy" in m]


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> Path:
    base = Path(os.environ.get("SLESS_TEST_OUTPUT", ROOT / ".test-output"))
    path = base / "browser" / request.node.name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


@pytest.fixture
def open_page(browser: Browser, shots: Path) -> Iterator[object]:
    """``open_page(viewport=DESKTOP)``: a fresh browser context (its own sessionStorage)."""
    contexts = []
    made: list[Watched] = []

    def make(viewport: dict[str, int] = DESKTOP, name: str = "") -> Watched:
        context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
        contexts.append(context)
        page = context.new_page()
        page.add_init_script(CSP_PROBE)
        watched = Watched(page=page, shots=shots / name if name else shots)
        watched.shots.mkdir(exist_ok=True)

        def on_dialog(dialog: Dialog) -> None:
            watched.dialogs.append(dialog.message)
            dialog.dismiss()

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                watched.console_errors.append(message.text)

        page.on("dialog", on_dialog)
        page.on("console", on_console)
        page.on("pageerror", lambda error: watched.errors.append(str(error)))
        made.append(watched)
        return watched

    yield make
    for watched in made:
        watched.shot("last")  # how each page looked when the test ended, passed or not
    for context in contexts:
        context.close()


@pytest.fixture
def settings(settings: Settings, llm: FakeLLM) -> Settings:
    return with_llm(settings, llm)
