"""Run a command in a network namespace whose only way out is one proxy socket.

The embedded build starts this file as ``python -I installer_netns.py SOCKET -- ARGV...``
right after ``unshare --net`` (so it is root in a network namespace holding only a loopback
interface that is still down, and pid 1 of a pid namespace of its own). It brings
loopback up, forwards ``127.0.0.1:3128`` to ``SOCKET`` (the gateway's allowlisting proxy,
``sless.backends.local.installer_network``), runs ``ARGV`` (``setpriv ...`` the installer,
as the tenant's uid) and exits with its status. Nothing but that port leads anywhere: no
route, no resolver.

Standard library only, and nothing of the gateway is imported: this runs before the
installer, as root, in the namespace the installer gets.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import struct
import sys

PROXY_PORT = 3128
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(probe, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def run(proxy_socket: str, argv: list[str]) -> int:
    async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(proxy_socket)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    server = await asyncio.start_server(forward, host="127.0.0.1", port=PROXY_PORT)
    async with server:
        process = await asyncio.create_subprocess_exec(*argv)
        return await process.wait()


def main() -> None:
    proxy_socket, separator, *argv = sys.argv[1:]
    if separator != "--" or not argv:
        raise SystemExit("usage: installer_netns.py SOCKET -- ARGV...")
    loopback_up()
    status = asyncio.run(run(proxy_socket, argv))
    # pid 1 of the namespace: everything the installer left behind dies with it
    os._exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
