"""The rules every ``/fn/`` answer passes (sless.gateway.pages): a function's page gets an
opaque origin, no header that acts on the whole origin, and cookies of its own path."""

from __future__ import annotations

from starlette.types import Message

from sless.gateway.pages import SANDBOX, function_path, isolated, scoped_cookie


async def _sent(path: str, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    got: list[Message] = []

    async def send(message: Message) -> None:
        got.append(message)

    await isolated(send, path)({"type": "http.response.start", "status": 200, "headers": headers})
    await isolated(send, path)({"type": "http.response.body", "body": b"x"})
    assert got[1] == {"type": "http.response.body", "body": b"x"}
    return list(got[0]["headers"])


async def test_every_answer_gets_the_sandbox_and_keeps_its_own_policy() -> None:
    own = (b"Content-Security-Policy", b"default-src 'self'")
    headers = await _sent("/fn/ns/app/", [(b"content-type", b"text/html"), own])
    assert (b"content-security-policy", SANDBOX) in headers
    assert own in headers
    assert b"allow-same-origin" not in SANDBOX


async def test_origin_wide_headers_never_leave() -> None:
    headers = await _sent(
        "/fn/ns/app",
        [
            (b"Service-Worker-Allowed", b"/"),
            (b"clear-site-data", b'"storage"'),
            (b"x-kept", b"1"),
        ],
    )
    names = [k.lower() for k, _ in headers]
    assert b"service-worker-allowed" not in names
    assert b"clear-site-data" not in names
    assert (b"x-kept", b"1") in headers


async def test_cookies_are_scoped_to_the_function() -> None:
    headers = await _sent(
        "/fn/ns/app@v3/deep/path",
        [(b"Set-Cookie", b"s=1; Domain=example.com; Path=/; HttpOnly; PATH=/console")],
    )
    assert (b"Set-Cookie", b"s=1; HttpOnly; Path=/fn/ns/app@v3") in headers


async def test_a_cookie_on_a_path_that_is_not_a_function_is_dropped() -> None:
    headers = await _sent("/fn/NS;x/app", [(b"set-cookie", b"s=1")])
    assert [k for k, _ in headers if k.lower() == b"set-cookie"] == []


def test_function_path() -> None:
    assert function_path("/fn/ns/app") == b"/fn/ns/app"
    assert function_path("/fn/ns/app/x/y") == b"/fn/ns/app"
    assert function_path("/fn/ns/app@v12?q") is None
    assert function_path("/fn/ns/app;Path=/") is None
    assert function_path("/fn/ns") is None


def test_scoped_cookie_keeps_the_pair_and_other_attributes() -> None:
    assert scoped_cookie(b"a=b=c; Secure; SameSite=Lax", b"/fn/n/f") == (
        b"a=b=c; Secure; SameSite=Lax; Path=/fn/n/f"
    )
