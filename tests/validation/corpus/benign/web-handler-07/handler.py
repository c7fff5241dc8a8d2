import json
import os
import secrets
import time
from urllib.parse import urlparse

import boto3
from botocore.exceptions import ClientError

links = boto3.resource("dynamodb").Table(os.environ["LINKS_TABLE"])
BASE = os.environ.get("SHORT_BASE", "https://sho.rt")


def create(body):
    target = body.get("url", "")
    if urlparse(target).scheme not in ("http", "https"):
        return 400, {"error": "url must be http(s)"}
    for _ in range(5):
        code = secrets.token_urlsafe(5)
        try:
            links.put_item(
                Item={"code": code, "url": target, "created": int(time.time()), "hits": 0},
                ConditionExpression="attribute_not_exists(code)",
            )
            return 201, {"short": f"{BASE}/{code}"}
        except ClientError as err:
            if err.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
    return 503, {"error": "could not allocate a code, try again"}


def handle(event, context=None):
    if event.get("httpMethod") == "POST":
        status, body = create(json.loads(event.get("body") or "{}"))
        return {"statusCode": status, "body": json.dumps(body)}
    code = (event.get("pathParameters") or {}).get("code", "")
    item = links.update_item(
        Key={"code": code},
        UpdateExpression="ADD hits :one",
        ExpressionAttributeValues={":one": 1},
        ConditionExpression="attribute_exists(code)",
        ReturnValues="ALL_NEW",
    ) if code else None
    if not item:
        return {"statusCode": 404}
    return {"statusCode": 301, "headers": {"location": item["Attributes"]["url"]}}
