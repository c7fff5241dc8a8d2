"""SQS consumer for 'order.paid' events: idempotent, reports partial batch failures."""
import json
import logging
import os
import time

import boto3
from botocore.exceptions import ClientError

log = logging.getLogger()
log.setLevel(logging.INFO)
dynamodb = boto3.resource("dynamodb")
processed = dynamodb.Table(os.environ["PROCESSED_TABLE"])
orders = dynamodb.Table(os.environ["ORDERS_TABLE"])


class AlreadyDone(Exception):
    pass


def _claim(message_id):
    try:
        processed.put_item(
            Item={"id": message_id, "expires": int(time.time()) + 7 * 86400},
            ConditionExpression="attribute_not_exists(id)",
        )
    except ClientError as err:
        if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
            raise AlreadyDone(message_id) from None
        raise


def _process(record):
    event = json.loads(record["body"])
    if event.get("type") != "order.paid":
        return
    _claim(record["messageId"])
    orders.update_item(
        Key={"id": event["order_id"]},
        UpdateExpression="SET #s = :paid, paid_at = :t",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":paid": "paid", ":t": event["paid_at"]},
    )


def handle(event, context=None):
    failures = []
    for record in event["Records"]:
        try:
            _process(record)
        except AlreadyDone:
            log.info("duplicate delivery %s ignored", record["messageId"])
        except Exception:
            log.exception("failed to process %s", record["messageId"])
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
