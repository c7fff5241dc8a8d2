import json, os
import boto3

sqs = boto3.client("sqs")

def handle(event, context):
    msgs = event["body"].get("items", [])
    entries = [{"Id": str(i), "MessageBody": json.dumps(m)} for i, m in enumerate(msgs[:10])]
    if entries:
        sqs.send_message_batch(QueueUrl=os.environ["QUEUE_URL"], Entries=entries)
    return {"queued": len(entries)}
