import base64
import json


def handle(event, context):
    out = []
    for record in event["body"].get("Records", []):
        payload = json.loads(base64.b64decode(record["kinesis"]["data"]))
        if payload.get("type") == "order":
            out.append({"id": payload["id"], "total": round(float(payload["total"]), 2)})
    return {"orders": out}
