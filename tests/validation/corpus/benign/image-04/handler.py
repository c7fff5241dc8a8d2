import base64
import io

from PIL import Image, ImageDraw, ImageOps


def handle(event, context=None):
    raw = base64.b64decode(event["image_base64"])
    img = Image.open(io.BytesIO(raw)).convert("RGB")
    ImageDraw.Draw(img).text((10, 10), event.get('text', 'sample'), fill=(255, 255, 255))
    out = io.BytesIO()
    img.save(out, format="PNG")
    return {"op": "watermark", "image_base64": base64.b64encode(out.getvalue()).decode("ascii")}
