"""The console's files as the gateway serves them: security headers on every response
under /console (found, missing, redirected), and a bundle that needs no inline script,
no eval and no markup built from strings (what the CSP and the escaping rely on)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx
import pytest

from sless.gateway.console import STATIC
from tests.conftest import RunningGateway

pytestmark = pytest.mark.integration


def _assert_headers(response: httpx.Response) -> None:
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert "unsafe-eval" not in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_every_console_response_has_the_security_headers(gateway: RunningGateway) -> None:
    with httpx.Client(base_url=gateway.url, follow_redirects=False) as client:
        index = client.get("/console/")
        assert index.status_code == 200
        assert "text/html" in index.headers["content-type"]
        _assert_headers(index)
        for name in sorted(p.name for p in STATIC.iterdir()):
            response = client.get(f"/console/{name}")
            assert response.status_code == 200, name
            _assert_headers(response)
        missing = client.get("/console/no-such-file.js")
        assert missing.status_code == 404
        _assert_headers(missing)
        redirect = client.get("/console")
        assert redirect.status_code == 307
        assert redirect.headers["location"] == "/console/"
        _assert_headers(redirect)
        # the console is not part of the API's schema
        paths = client.get("/openapi.json").json()["paths"]
        assert not [p for p in paths if p.startswith("/console")]
        assert "/v1/admin/stats" in paths


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inline_scripts = 0
        self.handlers: list[str] = []
        self.styles = 0
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        self.handlers += [n for n in names if n.startswith("on")]
        self.styles += tag == "style" or "style" in names
        if tag == "script" and not names.get("src"):
            self.inline_scripts += 1
        for key in ("src", "href"):
            value = names.get(key) or ""
            if "//" in value:
                self.external.append(value)


def test_the_page_has_no_inline_script_style_or_third_party_file() -> None:
    markup = _Markup()
    markup.feed((STATIC / "index.html").read_text())
    assert markup.inline_scripts == 0
    assert markup.handlers == []
    assert markup.styles == 0
    assert markup.external == []


FORBIDDEN = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|"
    r"setAttribute\(\"style\"|localStorage\.setItem|document\.cookie"
)


@pytest.mark.parametrize("script", sorted(p.name for p in STATIC.glob("*.js")))
def test_scripts_never_build_markup_from_strings(script: str) -> None:
    source = (STATIC / script).read_text()
    assert FORBIDDEN.findall(source) == []
