import os

import stripe

stripe.api_key = os.environ["STRIPE_SECRET_KEY"]


def handle(event, context=None):
    intent = stripe.PaymentIntent.create(
        amount=int(event["amount_cents"]),
        currency=event.get("currency", "eur"),
        metadata={"order_id": event["order_id"]},
        automatic_payment_methods={"enabled": True},
    )
    return {"client_secret": intent.client_secret}
