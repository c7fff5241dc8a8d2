"""Recording networks made ahead of time, so that the sink's start is off a detonation's path.

Starting a recording network (``unshare``, the sink's interpreter, ``cryptography`` and the
CA, ``ip``/``nft``, the resolver) costs about half a second, most of a detonation. A network
is used by exactly one detonation, so one is kept ready in the process: ``take`` hands it
out and starts the next, whose set-up then runs while the current upload is validated. The
first detonation of a process starts its own.

A ready network is a sink waiting on its stdin for the one command it will run (``sink
--wait``); nothing of an upload is in it until then, and each has its own CA, key and
directory. If this process exits, the sink reads end-of-file, removes its directory and
exits: no ready network outlives the process that made it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from sless.sandbox import seccomp as seccomp_filter

__all__ = ["Network", "discard", "take"]

_SINK = Path(__file__).with_name("sink.py")
_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class Network:
    """A recording network whose sink waits for its command."""

    #: 0711, the sink's: its key and record, ``public/`` (the CA, resolv.conf) and the code
    work: Path
    process: subprocess.Popen[bytes]
    #: the seccomp program's descriptor number in the sink, passed on to the sandbox
    seccomp_fd: int

    @property
    def public(self) -> Path:
        return self.work / "public"

    @property
    def record(self) -> Path:
        return self.work / "record.json"


_lock = threading.Lock()
_ready: Network | None = None


def take(uid: int) -> Network:
    """A network for one detonation (the ready one if it is still alive), and the next one
    started. Blocking for a few milliseconds (a directory and a process start)."""
    global _ready
    with _lock:
        network, _ready = _ready, None
    if network is None or network.process.poll() is not None:
        if network is not None:
            discard(network)
        network = _start(uid)
    with _lock:
        if _ready is None:
            _ready = _start(uid)
    return network


def discard(network: Network) -> None:
    """Stop ``network``'s sink and everything it started, and remove its directory."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(network.process.pid, signal.SIGKILL)
    network.process.wait()
    for stream in (network.process.stdin, network.process.stdout):
        if stream is not None:
            stream.close()
    shutil.rmtree(network.work, ignore_errors=True)


def _start(uid: int) -> Network:
    work = Path(tempfile.mkdtemp(prefix="sless-detonate-"))
    # the sandbox's uid reaches public/ (the CA, resolv.conf) through here: traverse only,
    # no listing (the directory holds the sink's key and record)
    os.chmod(work, 0o711)  # noqa: S103
    (work / "public").mkdir()
    os.chown(work / "public", uid, uid)
    seccomp_fd = seccomp_filter.program_fd()
    argv = [
        "unshare", "--net", "--mount", "--propagation", "private", "--",
        sys.executable, "-I", str(_SINK), str(work / "record.json"), str(work / "public"),
        "--wait",
    ]  # fmt: skip
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", _PATH), "SLESS_PASS_FDS": str(seccomp_fd)},
            pass_fds=(seccomp_fd,),
            start_new_session=True,
        )
    finally:
        os.close(seccomp_fd)
    return Network(work, process, seccomp_fd)


@atexit.register
def _discard_ready() -> None:
    global _ready
    with _lock:
        network, _ready = _ready, None
    if network is not None:
        discard(network)
