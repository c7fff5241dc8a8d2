import base64
import io

import qrcode
from qrcode.constants import ERROR_CORRECT_M
from qrcode.image.svg import SvgPathImage


def handle(event, context=None):
    data = event.get("data", "")
    if not data or len(data) > 2000:
        return {"statusCode": 400, "body": "data must be 1..2000 characters"}
    qr = qrcode.QRCode(error_correction=ERROR_CORRECT_M, box_size=int(event.get("box", 10)), border=4)
    qr.add_data(data)
    qr.make(fit=True)
    if event.get("format") == "svg":
        svg = qr.make_image(image_factory=SvgPathImage).to_string(encoding="unicode")
        return {"statusCode": 200, "headers": {"content-type": "image/svg+xml"}, "body": svg}
    img = qr.make_image(fill_color=event.get("fg", "black"), back_color=event.get("bg", "white"))
    buf = io.BytesIO()
    img.save(buf)
    return {
        "statusCode": 200,
        "headers": {"content-type": "image/png"},
        "isBase64Encoded": True,
        "body": base64.b64encode(buf.getvalue()).decode(),
    }
