# ruff: noqa
# fmt: off
import itertools
import multiprocessing
import os
import subprocess
import sys
import threading


def forks():
    while True:
        # ruleid: py-fork-bomb, py-fork
        os.fork()


def forks2(n):
    for _ in range(n):
        # ruleid: py-fork-bomb, py-fork
        pid = os.fork()


def threads():
    while 1:
        # ruleid: py-fork-bomb
        threading.Thread(target=lambda: None).start()


def procs():
    for i in itertools.count():
        # ruleid: py-fork-bomb
        multiprocessing.Process(target=print).start()


def respawn():
    # ruleid: py-fork-bomb
    subprocess.Popen([sys.executable, __file__])


def spread():
    # ruleid: py-fork-bomb
    threading.Thread(target=spread).start()
    # ruleid: py-fork-bomb
    threading.Thread(target=spread).start()


def one_fork():
    # ruleid: py-fork
    return os.fork()


def benign(urls, fetch):
    # ok: py-fork-bomb
    workers = [threading.Thread(target=fetch, args=(u,)) for u in urls]
    for w in workers:
        # ok: py-fork-bomb
        w.start()
    for u in urls[:4]:
        # ok: py-fork-bomb
        t = threading.Thread(target=fetch, args=(u,))
    with multiprocessing.Pool(2) as pool:
        # ok: py-fork-bomb, py-fork
        return pool.map(len, urls)
