"""Workers' stdout and stderr, carried to their log files by the platform.

Each worker writes into a pipe of its own (``LogPump.open``); one thread reads every pipe
and hands what it read to ``write`` (``LogFiles.write``), which makes room within the
function's and the tenant's bounds before it appends. So the bounds hold when the bytes
are written, not a moment later: a tenant's logs never take more than its limit on disk.

Carrying the bytes costs the platform's CPU (about 3 ms per MiB here), so each tenant
may log at ``rate`` bytes a second, after a ``burst``: past it the pump stops reading that
tenant's pipes until its allowance has grown back, and its workers block in write(2) on
their full pipes. A flood then costs the tenant's own time, not the gateway's, and nothing
it wrote is lost before the bounds drop the oldest.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: bytes read from one pipe at a time; also the pipe's capacity, where the kernel allows
CHUNK = 256 * 1024
#: how long the pump lets output gather once a pipe has some: a function that logs on
#: every call then costs one wake-up, read and write per pipe per LINGER_S, not per line
#: (the pump's CPU per call under wrk was about a tenth of the gateway's). A reader of
#: the log (``flush``) never waits for it: it drains the pipes itself.
LINGER_S = 0.01


class LogPump:
    def __init__(self, write: Callable[[str, str, bytes], None], *, rate: int, burst: int) -> None:
        self._write = write
        self._rate = rate
        self._burst = burst
        #: namespace → (bytes it may still log now, when that was worked out)
        self._allowance: dict[str, tuple[float, float]] = {}
        #: pipes not read until the monotonic time given: their tenant is over its rate
        self._paused: dict[int, float] = {}
        #: read end → (namespace, function)
        self._pipes: dict[int, tuple[str, str]] = {}
        #: held while a pipe is read and its bytes written, so chunks keep their order
        self._lock = threading.Lock()
        #: the thread, its epoll and the pipe ``close`` wakes it with; started by ``open``
        self._running: tuple[threading.Thread, select.epoll, int] | None = None

    def open(self, namespace: str, name: str) -> int:
        """A new write end for one worker's stdout and stderr (the caller closes it)."""
        read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(read_fd, False)
        with contextlib.suppress(OSError):  # the kernel may refuse: keep its default
            fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, CHUNK)
        with self._lock:
            if self._running is None:
                epoll = select.epoll()
                wake_read, wake_write = os.pipe2(os.O_CLOEXEC)
                epoll.register(wake_read, select.EPOLLIN)
                thread = threading.Thread(
                    target=self._run, args=(epoll, wake_read), name="log-pump", daemon=True
                )
                thread.start()
                self._running = (thread, epoll, wake_write)
            self._pipes[read_fd] = (namespace, name)
            self._running[1].register(read_fd, select.EPOLLIN)
        return write_fd

    def flush(self, namespace: str, name: str) -> None:
        """Write out what the function's workers have put in their pipes so far (before a
        line of the platform's own, so that it comes after the worker's last words)."""
        with self._lock:
            for fd, owner in list(self._pipes.items()):
                if owner == (namespace, name):
                    while self._drain(fd):
                        pass

    def _run(self, epoll: select.epoll, wake_read: int) -> None:
        while True:
            with self._lock:
                self._resume(epoll)
                wait = min(self._paused.values(), default=None)
            timeout = -1.0 if wait is None else max(0.0, wait - time.monotonic())
            try:
                ready = epoll.poll(timeout)
                if ready and all(fd != wake_read for fd, _ in ready):
                    time.sleep(LINGER_S)
                    ready = epoll.poll(0)  # level-triggered: every pipe with output now
            except InterruptedError:
                continue
            for fd, _ in ready:
                if fd == wake_read:
                    epoll.close()
                    os.close(wake_read)
                    return
                with self._lock:
                    if fd in self._pipes and fd not in self._paused:
                        self._pace(epoll, fd)

    def _pace(self, epoll: select.epoll, fd: int) -> None:
        """Read one chunk of ``fd`` within its tenant's allowance, or pause the pipe until
        the allowance has grown back. Called with ``_lock`` held."""
        namespace = self._pipes[fd][0]
        now = time.monotonic()
        allowance, since = self._allowance.get(namespace, (float(self._burst), now))
        allowance = min(float(self._burst), allowance + (now - since) * self._rate)
        if allowance < 1:
            self._paused[fd] = now + (1 - allowance) / self._rate + 0.01
            epoll.modify(fd, 0)
        else:
            allowance -= self._drain(fd, int(allowance))
        self._allowance[namespace] = (allowance, now)

    def _resume(self, epoll: select.epoll) -> None:
        now = time.monotonic()
        for fd, at in list(self._paused.items()):
            if at <= now:
                del self._paused[fd]
                if fd in self._pipes:
                    epoll.modify(fd, select.EPOLLIN)

    def _drain(self, fd: int, most: int = CHUNK) -> int:
        """Read one chunk of ``fd`` (at most ``most`` bytes) and write it; returns its
        size, 0 once the pipe is empty or done. Called with ``_lock`` held."""
        try:
            data = os.read(fd, min(most, CHUNK))
        except BlockingIOError:
            return 0
        except OSError:
            data = b""
        namespace, name = self._pipes[fd]
        if not data:  # every writer is gone: the worker and its children exited
            del self._pipes[fd]
            self._paused.pop(fd, None)
            os.close(fd)  # which takes it out of the epoll too
            return 0
        try:
            self._write(namespace, name, data)
        except OSError:
            log.warning("could not write the log of %s/%s", namespace, name, exc_info=True)
        return len(data)

    def close(self) -> None:
        """Write out what is left in the pipes and end the thread (the backend stops)."""
        with self._lock:
            for fd in list(self._pipes):
                while fd in self._pipes and self._drain(fd):
                    pass
                if fd in self._pipes:  # a writer lives on (a stray child): stop reading it
                    os.close(fd)
                    del self._pipes[fd]
            self._paused.clear()
            if self._running is not None:
                _, _, wake_write = self._running
                os.write(wake_write, b"x")
                os.close(wake_write)
                self._running = None


@dataclass(frozen=True)
class FunctionLog:
    """Where one function's workers write (``sless.sandbox.specs.LogSink``)."""

    pump: LogPump
    namespace: str
    name: str

    def open(self) -> int:
        return self.pump.open(self.namespace, self.name)

    def flush(self) -> None:
        self.pump.flush(self.namespace, self.name)
