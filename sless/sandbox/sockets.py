"""Connecting to a worker's socket: the inode the worker bound, never where a name points.

A worker's socket directory is the one host directory its sandbox may write to (bound at
``/run/sless``): whatever is named ``worker.sock`` there was put there by tenant code,
which can unlink the socket and leave a symbolic link in its place. ``connect(2)``
follows a link, and the gateway connects as root: a link made the gateway carry the
tenant's calls to any Unix socket of the host (another tenant's worker, whose answers
came back on the attacker's URL; a root-only API) and hand back the answer
(``tests/security/test_sandbox_worker_socket_redirect.py``). ``/proc/self/mountinfo``
names the socket directory's host path, so the other paths are no secret.

So every connection the platform makes to a worker (its pool's HTTP client, the start's
readiness probe, a pre-started worker's specialization) goes through ``connect``: the name
is opened with ``O_PATH | O_NOFOLLOW`` (a link is refused), the inode must be a socket,
and the connection is made to that inode through ``/proc/self/fd/N`` (as systemd's
``connect_unix_path`` does), so nothing can be swapped between the check and the connect.
The directories above the name are the platform's (root's run directory, 0711), not the
tenant's, so only the last component needs the check.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path


def _open_socket_inode(path: str | Path) -> int:
    """An ``O_PATH`` descriptor of the socket named ``path``; ``OSError`` when the name is a
    link (``ELOOP``), is no socket (``ENOTSOCK``) or does not exist."""
    fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISLNK(mode):
            raise OSError(errno.ELOOP, "the worker's socket is a symbolic link", str(path))
        if not stat.S_ISSOCK(mode):
            raise OSError(errno.ENOTSOCK, "the worker's socket is not a socket", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def _unconnected(path: str | Path) -> Iterator[tuple[socket.socket, str]]:
    """A new stream socket and the name that reaches the socket inode bound at ``path``
    (``/proc/self/fd/N``, valid inside the block); the socket is closed if the block
    fails."""
    fd = _open_socket_inode(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        yield sock, f"/proc/self/fd/{fd}"
    except BaseException:
        sock.close()
        raise
    finally:
        os.close(fd)


async def connect(path: str | Path) -> socket.socket:
    """A non-blocking stream socket connected to the socket bound at ``path`` (see the
    module's docstring); ``OSError`` when it is not one or nothing listens."""
    with _unconnected(path) as (sock, inode):
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, inode)
    return sock


def connect_blocking(path: str | Path, timeout_s: float | None = None) -> socket.socket:
    """``connect`` for a thread: a blocking socket (``timeout_s`` on each operation)."""
    with _unconnected(path) as (sock, inode):
        sock.settimeout(timeout_s)
        sock.connect(inode)
    return sock


async def accepts(path: str | Path) -> bool:
    """Whether a worker listens at ``path`` (its socket, not a link to another)."""
    try:
        sock = await connect(path)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        sock.close()
    return True
