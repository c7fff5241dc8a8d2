import os

import boto3
from boto3.dynamodb.conditions import Key

table = boto3.resource("dynamodb").Table(os.environ["TABLE_NAME"])


def handle(event, context=None):
    customer = event["customer_id"]
    resp = table.query(KeyConditionExpression=Key("pk").eq(f"CUSTOMER#{customer}"), Limit=25)
    return {"items": resp.get("Items", []), "more": "LastEvaluatedKey" in resp}
