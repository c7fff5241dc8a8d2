import json
import os

import boto3

sqs = boto3.client("sqs")
QUEUE = os.environ["QUEUE_URL"]


def handle(event, context=None):
    failures = []
    for record in event.get("Records", []):
        try:
            msg = json.loads(record["body"])
            sqs.send_message(QueueUrl=QUEUE, MessageBody=json.dumps({"id": msg["id"], "status": "processed"}))
        except (KeyError, json.JSONDecodeError):
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
