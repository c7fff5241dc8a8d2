import os, datetime, requests

def handle(event, context):
    since = (datetime.date.today() - datetime.timedelta(days=1)).isoformat()
    r = requests.get(os.environ["STATUS_API"] + "/incidents", params={"since": since}, timeout=10)
    incidents = r.json()
    if incidents:
        requests.post(os.environ["SLACK_WEBHOOK_URL"], json={"text": f"{len(incidents)} incidents since {since}"}, timeout=10)
    return {"incidents": len(incidents)}
