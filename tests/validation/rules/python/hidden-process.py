# ruff: noqa
# fmt: off
import os
import subprocess
import threading


def detach():
    # ruleid: py-detached-process
    subprocess.Popen(["/tmp/.x/kworker"], start_new_session=True)
    # ruleid: py-detached-process
    subprocess.Popen(["./miner"], preexec_fn=os.setsid, stdout=subprocess.DEVNULL)
    # ruleid: py-detached-process
    os.system("nohup /tmp/x >/dev/null 2>&1 &")
    # ruleid: py-detached-process
    subprocess.Popen("setsid ./agent", shell=True)
    # ruleid: py-detached-process
    os.spawnl(os.P_NOWAIT, "/tmp/x", "x")


def daemonize():
    if os.fork() > 0:
        return
    # ruleid: py-detached-process
    os.setsid()


def hidden():
    # ruleid: py-hidden-output-process
    return subprocess.Popen(["./helper"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def benign(path):
    # ok: py-detached-process, py-hidden-output-process
    out = subprocess.run(["ffmpeg", "-i", path, "/tmp/out.mp3"], capture_output=True, check=True)
    # ok: py-hidden-output-process
    subprocess.run(["gzip", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    # ok: py-detached-process
    threading.Thread(target=print, daemon=True).start()
    # ok: py-detached-process
    note = "run the job in the background"
    return out.stdout, note
