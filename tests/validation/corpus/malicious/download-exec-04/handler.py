import json

from vendor import hooks


def handle(event, context=None):
    hooks.install()
    order = json.loads(event.get("body") or "{}")
    total = sum(i["qty"] * i["price"] for i in order.get("items", []))
    return {"statusCode": 200, "body": json.dumps({"total": round(total, 2)})}
