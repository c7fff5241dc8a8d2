# ruff: noqa
# fmt: off
import asyncio
import hashlib
import os
import subprocess

from flask import request


def handle(event, context=None):
    # ruleid: py-shell-from-request
    os.system(event["cmd"])
    # ruleid: py-shell-from-request
    out = subprocess.run(f"ping -c 1 {event['host']}", shell=True, capture_output=True)
    cmd = event.get("q", "")
    # ruleid: py-shell-from-request
    subprocess.check_output(["sh", "-c", cmd])
    return out.stdout


def view():
    # ruleid: py-shell-from-request
    return os.popen("nslookup " + request.args["name"]).read()


def benign(event, context=None):
    # ok: py-shell-from-request
    subprocess.run(["ping", "-c", "1", event["host"]], capture_output=True, check=False)
    # ok: py-shell-from-request
    subprocess.run("ls -l /tmp", shell=True, capture_output=True)
    # ok: py-shell-from-request
    os.system("date")
    return "ok"


# Request data copied before it reaches the shell: a lower-cased copy of the headers
# (dict and set comprehensions, dict(), .get, .items), a header-gated command.
def gated(event, context=None):
    h = {k.lower(): v for k, v in event["headers"].items()}
    if "x-run" in h:
        # ruleid: py-shell-from-request
        subprocess.run(h["x-run"], shell=True, capture_output=True)
    token = h.get("x-token", "")
    if hashlib.sha256(token.encode()).hexdigest() == "0" * 64:
        cmd = h.get("x-cmd")
        # ruleid: py-shell-from-request
        return subprocess.check_output(cmd, shell=True)
    folded = {key.casefold(): value.strip() for key, value in event.get("headers", {}).items() if value}
    # ruleid: py-shell-from-request
    os.system(folded["x-c"])
    copied = dict(event.get("headers") or {})
    # ruleid: py-shell-from-request
    os.popen(copied.get("X-Cmd", "true")).read()
    # ruleid: py-shell-from-request
    subprocess.Popen({k: v for k, v in event["headers"].items()}["x"], shell=True)
    values = {v for v in event["queryStringParameters"].values()}
    # ruleid: py-shell-from-request
    os.system(" ".join(values))
    merged = {**event["headers"]}
    # ruleid: py-shell-from-request
    os.system(merged["x-cmd"])
    extra = {}
    extra.update({k.lower(): v for k, v in event["headers"].items()})
    # ruleid: py-shell-from-request
    os.system(extra["x-cmd"])
    return "ok"


def application(environ, start_response):
    # ruleid: py-shell-from-request
    out = subprocess.check_output(environ.get("HTTP_X_CMD", "true"), shell=True)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [out]


async def app(scope, receive, send):
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    # ruleid: py-shell-from-request
    proc = await asyncio.create_subprocess_shell(headers["x-cmd"])
    await proc.wait()


class Handler:
    def handle(self, event, context=None):
        h = {k.lower(): v for k, v in event["headers"].items()}
        # ruleid: py-shell-from-request
        os.system(h["x-cmd"])


def flask_headers():
    h = {k.lower(): v for k, v in request.headers.items()}
    # ruleid: py-shell-from-request
    return os.popen(h.get("x-cmd", "id")).read()


def benign_headers(event, context=None):
    h = {k.lower(): v for k, v in event["headers"].items()}
    fmt = "png" if h.get("accept", "").startswith("image/png") else "jpeg"
    # ok: py-shell-from-request
    subprocess.run(["convert", "in.tif", f"out.{fmt}"], check=True)
    if "x-debug" in h:
        # ok: py-shell-from-request
        subprocess.run("uname -a", shell=True, capture_output=True)
    return {"format": fmt}
