import subprocess, tempfile, os

def handle(event, context):
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "in.docx")
        with open(src, "wb") as f:
            f.write(event["body"].encode("latin-1"))
        res = subprocess.run(["pandoc", src, "-t", "markdown"], capture_output=True, text=True, timeout=20, check=False)
    if res.returncode != 0:
        return {"statusCode": 422, "body": res.stderr[:500]}
    return {"markdown": res.stdout}
