"""Creates a Stripe PaymentIntent for a cart total."""

import json
import os
import urllib.parse
import urllib.request

API = "https://api.stripe.com/v1/payment_intents"


def handle(event, context):
    key = os.environ.get("STRIPE_SECRET_KEY")
    if not key:
        return {"statusCode": 500, "body": {"error": "STRIPE_SECRET_KEY is not set"}}
    body = event["body"] if isinstance(event["body"], dict) else {}
    amount = int(body.get("amount_cents", 0))
    if amount <= 0:
        return {"statusCode": 400, "body": {"error": "amount_cents must be positive"}}
    form = urllib.parse.urlencode({"amount": amount, "currency": body.get("currency", "eur")}).encode()
    req = urllib.request.Request(API, data=form, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            intent = json.loads(resp.read())
    except OSError as exc:
        return {"statusCode": 502, "body": {"error": f"stripe unreachable: {exc}"}}
    return {"id": intent.get("id"), "client_secret": intent.get("client_secret")}
