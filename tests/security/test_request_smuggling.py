"""HTTP request smuggling against the gateway, with each HTTP parser ``sless up`` offers.

A front proxy and the gateway that disagree on where a request ends let an attacker hide
a second request inside the first one's body (CL.TE / TE.CL desync, RFC 9112 section 6.3,
"HTTP Desync Attacks", Kettle 2019). The raw answer to each ambiguous request below holds
exactly one response, never a second one for the smuggled request; httptools (the
default) refuses every one of them with 400.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.conftest import RunningGateway, free_port

SMUGGLED = b"GET /fn/sless-smuggle/hidden HTTP/1.1\r\nHost: x\r\n\r\n"

AMBIGUOUS = {
    "content_length_and_chunked": (
        b"POST /fn/sless-smuggle/front HTTP/1.1\r\nHost: x\r\n"
        b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"0\r\n\r\n" + SMUGGLED
    ),
    "two_different_content_lengths": (
        b"POST /fn/sless-smuggle/front HTTP/1.1\r\nHost: x\r\n"
        b"Content-Length: 0\r\nContent-Length: "
        + str(len(SMUGGLED)).encode()
        + b"\r\n\r\n"
        + SMUGGLED
    ),
    "space_before_the_colon": (
        b"POST /fn/sless-smuggle/front HTTP/1.1\r\nHost: x\r\n"
        b"Content-Length : " + str(len(SMUGGLED)).encode() + b"\r\n\r\n" + SMUGGLED
    ),
    "obfuscated_transfer_encoding": (
        b"POST /fn/sless-smuggle/front HTTP/1.1\r\nHost: x\r\n"
        b"Transfer-Encoding: xchunked\r\n\r\n" + SMUGGLED
    ),
    "chunked_not_last": (
        b"POST /fn/sless-smuggle/front HTTP/1.1\r\nHost: x\r\n"
        b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" + SMUGGLED
    ),
    "bare_lf_in_chunk_size": (
        b"POST /fn/sless-smuggle/front HTTP/1.1\r\nHost: x\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\n\r\n" + SMUGGLED
    ),
}


@pytest.fixture(params=["httptools", "h11"])
def served(request: pytest.FixtureRequest, gateway: RunningGateway) -> Iterator[tuple[str, int]]:
    """The running gateway's app behind a uvicorn with the given parser, and its port."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(
        gateway.app,  # type: ignore[arg-type]
        host="127.0.0.1",
        port=port,
        lifespan="off",  # the gateway fixture's server already started the platform
        log_level="warning",
        http=request.param,
        access_log=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive(), "uvicorn did not start"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield request.param, port
    server.should_exit = True
    thread.join(10)


def _exchange(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


#: what h11 does instead of refusing: RFC 9112 section 6.3 lets a server that gets both
#: Content-Length and chunked use the chunked framing, then close the connection
H11_CHUNKED_WINS = {"content_length_and_chunked"}


@pytest.mark.parametrize("attack", sorted(AMBIGUOUS))
def test_an_ambiguous_request_is_refused_and_nothing_is_smuggled(
    served: tuple[str, int], attack: str
) -> None:
    parser, port = served
    answer = _exchange(port, AMBIGUOUS[attack])
    # the smuggled request never gets an answer of its own
    assert answer.count(b"HTTP/1.1 ") == 1, answer[:500]
    if parser == "h11" and attack in H11_CHUNKED_WINS:
        assert b"/hidden" not in answer
        return
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
