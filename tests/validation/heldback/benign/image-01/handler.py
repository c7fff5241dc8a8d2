import base64, io
from PIL import Image

def handle(event, context):
    data = base64.b64decode(event["body"]["image"])
    img = Image.open(io.BytesIO(data))
    img.thumbnail((256, 256))
    buf = io.BytesIO()
    img.convert("RGB").save(buf, "JPEG", quality=85)
    return {"thumb": base64.b64encode(buf.getvalue()).decode()}
