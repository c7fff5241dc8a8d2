import hashlib, os
import redis

r = redis.from_url(os.environ["REDIS_URL"])
ALPHA = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

def _code(url):
    n = int(hashlib.sha256(url.encode()).hexdigest()[:12], 16)
    out = ""
    while n:
        n, i = divmod(n, len(ALPHA))
        out += ALPHA[i]
    return out[:7]

def handle(event, context):
    if event["method"] == "POST":
        url = event["body"]["url"]
        code = _code(url)
        r.set(f"s:{code}", url)
        return {"short": f"https://sho.rt/{code}"}
    target = r.get(f"s:{event['path'].lstrip('/')}")
    return {"statusCode": 302, "headers": {"location": target.decode()}} if target else {"statusCode": 404}
