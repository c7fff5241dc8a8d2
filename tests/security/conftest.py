"""The sandbox attack tests run against both isolations of embedded mode.

Every test of a module that launches workers through ``tests.integration.sandbox.harness``
is parametrised over ``bubblewrap`` and ``gvisor`` (the ``isolation`` fixture sets what
``harness.launch`` uses). The gVisor leg is collected where runsc is built, as the node
tier is (``scripts/kube-testenv build``, runsc on PATH, or ``SLESS_SANDBOX_RUNSC``): a
machine without it runs the bubblewrap leg only, and says so in the header.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest

from sless.config import Settings

# a real browser, for the attacks made through a page (test_function_page_steals_console_session)
from tests.browser.conftest import browser, open_page, shots  # noqa: F401
from tests.integration.sandbox import harness

ISOLATIONS = ("bubblewrap", "gvisor")


def _launches_workers(metafunc: pytest.Metafunc) -> bool:
    return getattr(metafunc.module, "launch", None) is harness.launch or hasattr(
        metafunc.module, "make_spec"
    )


def pytest_report_header(config: pytest.Config) -> str:
    gvisor = harness.built_runsc()
    if gvisor is None:
        return "sandbox isolations: bubblewrap (runsc not built: no gVisor leg)"
    return f"sandbox isolations: bubblewrap, gvisor ({gvisor.runsc}, {gvisor.platform})"


def _asks_for_isolation(metafunc: pytest.Metafunc) -> bool:
    # by name in its own signature, or through the in-process gateway's settings (the
    # ``settings`` fixture below): the autouse fixture is in every test's fixturenames, and
    # a test whose platform runs in a subprocess of its own would run the same test twice
    return (
        "isolation" in inspect.signature(metafunc.function).parameters
        or "settings" in metafunc.fixturenames
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if _asks_for_isolation(metafunc) or _launches_workers(metafunc):
        legs = ISOLATIONS if harness.built_runsc() is not None else ISOLATIONS[:1]
        metafunc.parametrize("isolation", legs, indirect=True)


@pytest.fixture(autouse=True)
def isolation(request: pytest.FixtureRequest) -> Iterator[str]:
    """``bubblewrap`` or ``gvisor``: what ``harness.launch`` runs this test's workers in."""
    chosen = getattr(request, "param", "bubblewrap")
    harness.ISOLATION = harness.built_runsc() if chosen == "gvisor" else None
    try:
        yield chosen
    finally:
        harness.ISOLATION = None


@pytest.fixture
def settings(settings: Settings, isolation: str) -> Settings:
    """The in-process gateway's workers run in the leg's isolation, as ``sless up
    --isolation`` would run them."""
    if isolation == "gvisor":
        gvisor = harness.built_runsc()
        assert gvisor is not None  # the leg is collected only where runsc is built
        settings.sandbox.isolation = "gvisor"
        settings.sandbox.runsc = gvisor.runsc
        settings.sandbox.runsc_platform = gvisor.platform
    return settings
