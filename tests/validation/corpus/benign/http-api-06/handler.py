import asyncio
import os

import httpx

API = os.environ.get("STATUS_API", "https://status.example.com/api")


async def _check(client, service):
    r = await client.get(f"{API}/services/{service}")
    return service, r.status_code == 200 and r.json().get("status") == "up"


async def main(services):
    async with httpx.AsyncClient(timeout=3) as client:
        return dict(await asyncio.gather(*(_check(client, s) for s in services)))


def handle(event, context=None):
    return asyncio.run(main(event.get("services", ["api", "web", "db"])))
