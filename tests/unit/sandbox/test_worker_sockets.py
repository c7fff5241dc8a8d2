"""The platform connects to the socket a worker bound, never to where a name points
(``sless.sandbox.sockets``; the attack from a handler:
tests/security/test_sandbox_worker_socket_redirect.py)."""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from sless.sandbox import connect_worker_socket, worker_socket_accepts
from sless.sandbox.sockets import connect_blocking


@pytest.fixture
def listening(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "elsewhere.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(4)
        yield path


async def test_a_socket_is_connected_to(listening: Path) -> None:
    sock = await connect_worker_socket(listening)
    with sock:
        assert sock.getpeername() == str(listening)
    assert await worker_socket_accepts(listening)
    with connect_blocking(listening, 5) as blocking:
        assert blocking.getpeername() == str(listening)


async def test_a_link_to_a_listening_socket_is_refused(tmp_path: Path, listening: Path) -> None:
    link = tmp_path / "worker.sock"
    link.symlink_to(listening)
    with pytest.raises(OSError, match="symbolic link") as caught:
        await connect_worker_socket(link)
    assert caught.value.errno == errno.ELOOP
    with pytest.raises(OSError, match="symbolic link") as caught:
        connect_blocking(link)
    assert caught.value.errno == errno.ELOOP
    assert not await worker_socket_accepts(link)


async def test_what_is_no_socket_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "worker.sock"
    plain.write_text("not a socket")
    os.mkfifo(tmp_path / "fifo.sock")
    for path in (plain, tmp_path / "fifo.sock"):
        with pytest.raises(OSError, match="not a socket") as caught:
            await connect_worker_socket(path)
        assert caught.value.errno == errno.ENOTSOCK
    with pytest.raises(FileNotFoundError):
        await connect_worker_socket(tmp_path / "missing.sock")
