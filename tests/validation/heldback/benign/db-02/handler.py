import os
import redis

r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379/0"))

def handle(event, context):
    key = f"hits:{event['path']}"
    n = r.incr(key)
    r.expire(key, 3600)
    return {"hits": n}
