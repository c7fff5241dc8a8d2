import gzip, json, base64
from datetime import datetime, timezone

def handle(event, context):
    raw = base64.b64decode(event["body"]["data"])
    logs = json.loads(gzip.decompress(raw))
    out = []
    for e in logs.get("logEvents", []):
        ts = datetime.fromtimestamp(e["timestamp"] / 1000, tz=timezone.utc)
        out.append({"at": ts.isoformat(), "msg": e["message"][:500]})
    return {"count": len(out), "first": out[0] if out else None}
