import base64
import binascii


def handle(event, context=None):
    try:
        data = base64.b64decode(event["data"], validate=True)
    except (binascii.Error, KeyError):
        return {"statusCode": 400, "body": "data must be base64"}
    return {"bytes": len(data), "hex": data[:32].hex(), "urlsafe": base64.urlsafe_b64encode(data).decode()}
