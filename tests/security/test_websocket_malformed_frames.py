"""Attack: raw WebSocket frames that break RFC 6455 (an unmasked client frame, a length
far past any limit, a reserved opcode), sent after a valid upgrade, to confuse the relay
or make the gateway buffer a huge message. The gateway's server parses the caller's
frames: each one ends the session with a close (1002 protocol error, 1009 too big) and
the connection, the function never sees the frame, and the next session works.
"""

from __future__ import annotations

import base64
import os
import socket
import struct

import httpx
import pytest
from websockets.sync.client import connect

from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

NS = "sless-acme"
#: logs each message it gets: the log shows whether a bad frame reached it
LOGGING_ECHO = {
    "handler.py": (
        "async def handle(event, context):\n"
        "    ws = context.websocket\n"
        "    while (message := await ws.receive()) is not None:\n"
        "        print('got', message, flush=True)\n"
        "        await ws.send(message)\n"
    )
}


def upgrade(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /fn/{NS}/echo HTTP/1.1\r\nhost: t\r\nupgrade: websocket\r\n"
            f"connection: upgrade\r\nsec-websocket-key: {key}\r\n"
            "sec-websocket-version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def _masked(opcode: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes((0x80 | opcode, 0x80 | len(payload))) + mask + body


def close_code(sock: socket.socket) -> int | None:
    """The code of the server's close frame; None if the connection ended without one."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
        while len(data) >= 2:
            opcode, length = data[0] & 0x0F, data[1] & 0x7F
            if len(data) < 2 + length:
                break
            if opcode == 0x8:
                return int(struct.unpack("!H", data[2:4])[0]) if length >= 2 else 1005
            data = data[2 + length :]


BAD_FRAMES = {
    # a client frame without a mask (RFC 6455 5.1: the server must close)
    "unmasked": bytes((0x81, 5)) + b"smash",
    # a 64-bit length of 2^62 bytes, masked, with nothing behind it
    "huge-length": bytes((0x82, 0x80 | 127)) + struct.pack("!Q", 1 << 62) + os.urandom(4),
    # reserved opcode 0x3
    "reserved-opcode": _masked(0x3, b"smash"),
    # a reserved bit set without an extension
    "rsv-bit": bytes((0xC1,)) + _masked(0x1, b"smash")[1:],
}


@pytest.mark.parametrize("frame", list(BAD_FRAMES), ids=list(BAD_FRAMES))
def test_a_malformed_frame_ends_the_session_and_never_reaches_the_function(
    gateway: RunningGateway, frame: str
) -> None:
    # under uvicorn (websockets' parser); tests/e2e/test_websockets_served.py: granian
    acme = gateway.tenant("acme")
    deploy(acme, NS, "echo", LOGGING_ECHO, {"websocket": True, "timeout_s": 60})
    port = int(gateway.url.rsplit(":", 1)[1])
    with upgrade(port) as sock:
        sock.sendall(BAD_FRAMES[frame])
        assert close_code(sock) == (1009 if frame == "huge-length" else 1002)
    assert "smash" not in acme.get(f"/v1/namespaces/{NS}/functions/echo/logs").text
    ws_url = gateway.url.replace("http://", "ws://") + f"/fn/{NS}/echo"
    with connect(ws_url, open_timeout=60) as ws:
        ws.send("still works")
        assert ws.recv(timeout=60) == "still works"
    assert httpx.get(f"{gateway.url}/healthz", timeout=60).status_code == 200
