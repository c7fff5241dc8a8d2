import asyncio
import os
import time

import httpx

RATE = float(os.environ.get("REQUESTS_PER_SECOND", "5"))
BASE = os.environ.get("CATALOG_API", "https://catalog.example.com/api/v2")


class TokenBucket:
    def __init__(self, rate: float, capacity: int):
        self.rate, self.capacity = rate, capacity
        self.tokens, self.updated = float(capacity), time.monotonic()
        self.lock = asyncio.Lock()

    async def take(self):
        async with self.lock:
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                await asyncio.sleep((1 - self.tokens) / self.rate)


async def fetch(client, bucket, sku):
    for attempt in range(3):
        await bucket.take()
        r = await client.get(f"{BASE}/products/{sku}")
        if r.status_code == 429:
            await asyncio.sleep(float(r.headers.get("retry-after", 2 ** attempt)))
            continue
        if r.status_code == 404:
            return sku, None
        r.raise_for_status()
        return sku, r.json()
    return sku, {"error": "rate limited"}


async def main(skus):
    bucket = TokenBucket(RATE, capacity=int(RATE))
    async with httpx.AsyncClient(timeout=10, headers={"x-api-key": os.environ["CATALOG_KEY"]}) as client:
        return dict(await asyncio.gather(*(fetch(client, bucket, s) for s in skus)))


def handle(event, context=None):
    return asyncio.run(main(event["skus"][:500]))
