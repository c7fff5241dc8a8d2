import base64
import io

from PIL import Image, ImageDraw, ImageOps


def handle(event, context=None):
    raw = base64.b64decode(event["image_base64"])
    img = Image.open(io.BytesIO(raw)).convert("RGB")
    img.thumbnail((int(event.get('size', 256)),) * 2)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return {"op": "thumbnail", "image_base64": base64.b64encode(out.getvalue()).decode("ascii")}
