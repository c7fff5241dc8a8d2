"""``callback_url``: an absolute http(s) URL with a host, no credentials, bounded length."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sless.models import MAX_CALLBACK_URL_LENGTH, FunctionSpec


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/sless",
        "http://10.0.0.5:8080/cb?tenant=acme&x=1",
        "https://[2001:db8::1]:8443/",
        "http://hooks.example.com",
        "https://h.example.com/" + "a" * (MAX_CALLBACK_URL_LENGTH - len("https://h.example.com/")),
    ],
)
def test_valid_callback_urls(url: str) -> None:
    assert FunctionSpec(callback_url=url).callback_url == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://hooks.example.com/", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("gopher://127.0.0.1:6379/_FLUSHALL", "http:// or https://"),
        ("hooks.example.com/cb", "http:// or https://"),
        ("//hooks.example.com/cb", "http:// or https://"),
        ("https://user:pass@hooks.example.com/", "credentials"),
        ("https://token@hooks.example.com/", "credentials"),
        ("https://hooks.example.com@evil.example.net/", "credentials"),
        ("http:///no-host", "needs a host"),
        ("https://hooks.example.com:99999/", "invalid port"),
        ("https://hooks.example.com:http/", "invalid port"),
        ("https://hooks.example.com/#frag", "fragment"),
        ("https://hooks.example.com/ cb", "spaces or control"),
        ("https://hooks.example.com/\r\nX-Injected: 1", "spaces or control"),
        ("https://h.example.com/" + "a" * MAX_CALLBACK_URL_LENGTH, "at most 2048"),
    ],
)
def test_invalid_callback_urls(url: str, reason: str) -> None:
    with pytest.raises(ValidationError) as e:
        FunctionSpec(callback_url=url)
    assert reason in str(e.value)


def test_no_callback_by_default() -> None:
    spec = FunctionSpec()
    assert spec.callback_url is None
    assert spec.callback_secret is None


@pytest.mark.parametrize("name", ["Bad_Name", "", "a" * 64])
def test_callback_secret_is_a_secret_name(name: str) -> None:
    with pytest.raises(ValidationError):
        FunctionSpec(callback_url="https://hooks.example.com/", callback_secret=name)
