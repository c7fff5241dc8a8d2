import io, base64
import qrcode

def handle(event, context):
    text = event["query"].get("text", "hello")[:512]
    img = qrcode.make(text)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return {"statusCode": 200, "headers": {"content-type": "image/png;base64"}, "body": base64.b64encode(buf.getvalue()).decode()}
