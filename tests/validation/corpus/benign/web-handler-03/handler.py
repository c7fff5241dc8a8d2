import csv
import datetime as dt
import io
import os

import boto3
from boto3.dynamodb.conditions import Key

table = boto3.resource("dynamodb").Table(os.environ.get("ORDERS_TABLE", "orders"))
COLUMNS = ["order_id", "customer", "status", "total", "currency", "created_at"]


def _orders_for(tenant, since):
    kwargs = {"KeyConditionExpression": Key("tenant").eq(tenant) & Key("created_at").gte(since)}
    while True:
        page = table.query(**kwargs)
        yield from page["Items"]
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def handle(event, context=None):
    params = event.get("queryStringParameters") or {}
    tenant = (event.get("requestContext", {}).get("authorizer") or {}).get("tenant")
    if not tenant:
        return {"statusCode": 403, "body": "no tenant"}
    days = int(params.get("days", "30"))
    since = (dt.date.today() - dt.timedelta(days=days)).isoformat()

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for order in _orders_for(tenant, since):
        order["total"] = f"{order.get('total', 0):.2f}"
        writer.writerow(order)

    filename = f"orders-{tenant}-{dt.date.today():%Y%m%d}.csv"
    return {
        "statusCode": 200,
        "headers": {
            "content-type": "text/csv; charset=utf-8",
            "content-disposition": f'attachment; filename="{filename}"',
        },
        "body": buf.getvalue(),
    }
