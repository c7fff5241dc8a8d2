import base64
import io

from PIL import Image
from PIL.ExifTags import GPSTAGS, TAGS


def _exif(img):
    exif = img.getexif()
    named = {TAGS.get(tag, tag): value for tag, value in exif.items()}
    gps = exif.get_ifd(0x8825)
    return named, {GPSTAGS.get(t, t): v for t, v in gps.items()}


def handle(event, context=None):
    """Returns the photo's camera metadata and a copy with all EXIF (including GPS) removed."""
    try:
        img = Image.open(io.BytesIO(base64.b64decode(event["photo"], validate=True)))
        img.load()
    except (ValueError, OSError) as exc:
        return {"error": f"not an image: {exc}"}
    if img.format not in ("JPEG", "TIFF", "WEBP"):
        return {"error": f"unsupported format {img.format}"}

    meta, gps = _exif(img)
    clean = Image.new(img.mode, img.size)
    clean.putdata(list(img.getdata()))
    buf = io.BytesIO()
    clean.save(buf, format="JPEG", quality=90)
    return {
        "camera": f"{meta.get('Make', '')} {meta.get('Model', '')}".strip() or None,
        "taken": str(meta.get("DateTime")) if meta.get("DateTime") else None,
        "had_gps": bool(gps),
        "size": img.size,
        "clean_photo": base64.b64encode(buf.getvalue()).decode(),
    }
