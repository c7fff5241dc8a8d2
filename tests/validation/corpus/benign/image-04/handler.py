import colorsys
import hashlib
import io

from PIL import Image, ImageDraw, ImageFont

FONT_PATH = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


def _initials(name: str) -> str:
    parts = [p for p in name.replace("-", " ").split() if p]
    if not parts:
        return "?"
    return (parts[0][0] + (parts[-1][0] if len(parts) > 1 else "")).upper()


def _colour(seed: str) -> tuple[int, int, int]:
    hue = int(hashlib.md5(seed.encode()).hexdigest()[:4], 16) / 0xFFFF
    r, g, b = colorsys.hls_to_rgb(hue, 0.45, 0.55)
    return int(r * 255), int(g * 255), int(b * 255)


def handle(event, context=None):
    """Placeholder avatar: the user's initials on a colour derived from their id."""
    size = max(32, min(int(event.get("size", 128)), 512))
    img = Image.new("RGB", (size, size), _colour(event.get("user_id", event.get("name", ""))))
    draw = ImageDraw.Draw(img)
    try:
        font = ImageFont.truetype(FONT_PATH, size // 2)
    except OSError:
        font = ImageFont.load_default()
    text = _initials(event.get("name", ""))
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    draw.text(((size - (right - left)) / 2 - left, (size - (bottom - top)) / 2 - top), text, font=font, fill="white")
    buf = io.BytesIO()
    img.save(buf, "WEBP", quality=90)
    return {"content_type": "image/webp", "bytes": buf.getvalue().hex()}
