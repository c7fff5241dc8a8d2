"""The floor under the gateway: granian and the gateway's own HTTP/1.1 client, nothing else.

    python minimal_proxy.py PORT SOCKET [SOCKET...]

Serves every request on 127.0.0.1:PORT by one keep-alive exchange with the next worker
socket (round robin), through the same server (granian's embedded ASGI server on uvloop,
one process, the GIL switch interval ``sless up`` sets) and the same client
(sless.backends.http1) as the gateway's invoke path, and answers with the worker's status,
headers and body. No authentication, limits, header rules, record, journal, metrics or
tracing: bench/invoke.py runs it in front of the same workers as the gateway and nginx, so
the gateway's CPU per call splits into this floor (what any Python proxy built this way
costs) and the platform's own work per call (the difference). Not a server to use.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import sys
from typing import Any

import uvloop
from granian.constants import HTTPModes, Interfaces
from granian.server.embed import Server

from sless.backends.http1 import Http1Client
from sless.cli.server import GIL_SWITCH_INTERVAL_S

MAX_RESPONSE_BYTES = 1 << 20


def proxy_app(sockets: list[str]) -> Any:
    clients = itertools.cycle([Http1Client.unix(path) for path in sockets])

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        client = next(clients)
        async with client.stream(
            "GET", "/", [], b"", max_response_bytes=MAX_RESPONSE_BYTES
        ) as answer:
            chunks = []
            while chunk := await answer.read():
                chunks.append(chunk)
        body = b"".join(chunks)
        headers = [*answer.headers, (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def main() -> None:
    port, sockets = int(sys.argv[1]), sys.argv[2:]
    server = Server(
        proxy_app(sockets),
        address="127.0.0.1",
        port=port,
        interface=Interfaces.ASGI,
        http=HTTPModes.http1,
        websockets=False,
    )
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)

    async def serve() -> None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, server.stop)
        await server.serve()

    uvloop.run(serve())


if __name__ == "__main__":
    main()
