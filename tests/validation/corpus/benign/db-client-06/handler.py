import os

import redis

r = redis.Redis(host=os.environ.get("REDIS_HOST", "localhost"), port=int(os.environ.get("REDIS_PORT", "6379")), decode_responses=True)


def handle(event, context=None):
    key = f"ratelimit:{event['client_id']}"
    count = r.incr(key)
    if count == 1:
        r.expire(key, 60)
    return {"allowed": count <= 100, "count": count}
