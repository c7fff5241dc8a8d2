import base64
import subprocess
import tempfile


def handle(event, context):
    with tempfile.NamedTemporaryFile(suffix=".mp4") as src, tempfile.NamedTemporaryFile(suffix=".jpg") as out:
        src.write(base64.b64decode(event["body"]["video"]))
        src.flush()
        subprocess.run(["ffmpeg", "-y", "-i", src.name, "-frames:v", "1", out.name], check=True, capture_output=True, timeout=30)
        return {"thumbnail": base64.b64encode(out.read()).decode()}
