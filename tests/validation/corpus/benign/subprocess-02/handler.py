import base64
import pathlib
import subprocess
import tempfile


def handle(event, context=None):
    with tempfile.TemporaryDirectory() as tmp:
        src = str(pathlib.Path(tmp) / "input")
        dst = str(pathlib.Path(tmp) / "output")
        pathlib.Path(src).write_bytes(base64.b64decode(event["file"]))
        result = subprocess.run(["pandoc", src, "-o", dst], capture_output=True, timeout=60, check=False)
        if result.returncode != 0:
            return {"tool": "pandoc", "error": result.stderr.decode(errors="replace")[-1000:]}
        return {"tool": "pandoc", "output": base64.b64encode(pathlib.Path(dst).read_bytes()).decode()}
