"""Build info: which commit and toolchain this function was built with, plus the caller's view."""

import subprocess


def _run(command):
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=5)
    return done.stdout.strip()


def handle(event, context=None):
    h = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    info = {
        "python": _run("python3 --version"),
        "kernel": _run("uname -sr"),
        "request_id": h.get("x-request-id", ""),
    }
    if h.get("x-verbose") == "1":
        info["packages"] = _run("python3 -m pip list --format=freeze | head -n 20").splitlines()
    return info
