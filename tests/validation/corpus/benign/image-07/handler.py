import io

import qrcode


def handle(event, context=None):
    img = qrcode.make(event["url"], box_size=8, border=2)
    buf = io.BytesIO()
    img.save(buf)
    return {"statusCode": 200, "headers": {"Content-Type": "image/png"}, "body": buf.getvalue().hex()}
