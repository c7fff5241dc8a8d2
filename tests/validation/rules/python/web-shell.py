# ruff: noqa
# fmt: off
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
