"""Workers' output goes through the platform's log pump: bounded when written, paced per
tenant, in order, and the platform's own line after the worker's last words."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sless.backends.local.logfiles import MARKER, MAX_OPEN, LogFiles

MiB = 1024 * 1024


def tenant_bytes(root: Path, namespace: str) -> int:
    return sum(p.stat().st_size for p in (root / namespace).glob("*.log"))


def run_writer(files: LogFiles, namespace: str, name: str, program: str) -> None:
    """Run ``program`` with its stdout and stderr on the function's sink, to its end."""
    fd = files.sink(namespace, name).open()
    try:
        subprocess.run([sys.executable, "-c", program], stdout=fd, stderr=fd, check=True)
    finally:
        os.close(fd)


@pytest.fixture
def files(tmp_path: Path) -> Iterator[LogFiles]:
    logs = LogFiles(tmp_path, max_bytes=MiB, tenant_max_bytes=MiB, rate=64 * MiB, burst=64 * MiB)
    yield logs
    logs.close()


def test_output_arrives_whole_and_in_order(files: LogFiles, tmp_path: Path) -> None:
    run_writer(files, "ns", "f", "for i in range(5000): print(f'line {i:05d}')")
    files.sink("ns", "f").flush()
    lines = files.path("ns", "f").read_text().splitlines()
    assert lines == [f"line {i:05d}" for i in range(5000)]


def test_the_tenant_never_holds_more_than_its_limit(files: LogFiles, tmp_path: Path) -> None:
    seen = 0
    running = True

    def sample() -> None:
        nonlocal seen
        while running:
            seen = max(seen, tenant_bytes(tmp_path, "ns"))

    sampler = threading.Thread(target=sample)
    sampler.start()
    flood = "import sys\nfor _ in range(200): sys.stdout.buffer.write(b'z' * 65535 + b'\\n')"
    writers = [
        threading.Thread(target=run_writer, args=(files, "ns", name, flood)) for name in "abc"
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    for name in "abc":
        files.sink("ns", name).flush()
    running = False
    sampler.join()
    assert 0 < seen <= MiB
    assert tenant_bytes(tmp_path, "ns") <= MiB
    assert files.path("ns", "a").read_bytes().startswith(MARKER)


def test_a_tenant_over_its_rate_is_paced(tmp_path: Path) -> None:
    rate, burst = 256 * 1024, 256 * 1024
    bound = 64 * MiB
    files = LogFiles(tmp_path, max_bytes=bound, tenant_max_bytes=bound, rate=rate, burst=burst)
    try:
        fd = files.sink("ns", "f").open()
        started = time.monotonic()
        writer = subprocess.Popen(
            [sys.executable, "-c", "import sys\nsys.stdout.buffer.write(b'q' * (4 << 20))"],
            stdout=fd,
        )
        os.close(fd)
        for _ in range(10):
            time.sleep(0.1)
            written = files.path("ns", "f").stat().st_size if files.path("ns", "f").exists() else 0
            # the pump never carries more than the burst and the rate allow
            assert written <= burst + rate * (time.monotonic() - started)
        assert writer.poll() is None, "the writer is held back, waiting on its full pipe"
        writer.kill()
        writer.wait()
    finally:
        files.close()


def test_the_platform_line_comes_after_the_workers_last_words(files: LogFiles) -> None:
    run_writer(files, "ns", "f", "import sys\nprint('first')\nprint('last words', file=sys.stderr)")
    files.append("ns", "f", "[sless] killed: out of memory (128 MiB)")
    lines = files.path("ns", "f").read_text().splitlines()
    assert lines == ["first", "last words", "[sless] killed: out of memory (128 MiB)"]


def test_the_pump_starts_again_after_close(files: LogFiles) -> None:
    run_writer(files, "ns", "f", "print('before')")
    files.close()
    run_writer(files, "ns", "f", "print('after')")
    files.sink("ns", "f").flush()
    assert files.path("ns", "f").read_text().splitlines() == ["before", "after"]


async def test_a_tail_read_sees_what_was_written_until_then(tmp_path: Path) -> None:
    # the pump's own thread is held back after 64 KiB (its tenant is over its rate): only
    # the tail read's flush can bring the last line in
    files = LogFiles(tmp_path, max_bytes=MiB, tenant_max_bytes=MiB, rate=4096, burst=65536)
    fd = files.sink("ns", "f").open()
    try:
        os.write(fd, b"x" * 200_000 + b"\nwritten just now\n")
        assert "written just now" in await files.tail("ns", "f", 1000)
    finally:
        os.close(fd)
        files.close()


def _open_under(root: Path) -> int:
    """This process's descriptors open on files under ``root``."""
    held = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the listing's own descriptor, closed meanwhile
            continue
        held += target.startswith(str(root) + "/")
    return held


def test_log_files_stay_open_within_a_bound_and_a_removed_log_starts_afresh(
    files: LogFiles, tmp_path: Path
) -> None:
    """Writes reuse an open descriptor (no open and close per write), at most MAX_OPEN of
    them; a removed function's log is not written through a stale descriptor."""
    for i in range(MAX_OPEN + 10):
        files.write("ns", f"f{i}", b"one\n")
        files.write("ns", f"f{i}", b"two\n")
    assert _open_under(tmp_path) == MAX_OPEN
    assert all(
        files.path("ns", f"f{i}").read_bytes() == b"one\ntwo\n" for i in range(MAX_OPEN + 10)
    )
    files.write("ns", "f0", b"three\n")  # evicted, then opened again
    assert files.path("ns", "f0").read_bytes() == b"one\ntwo\nthree\n"
    files.remove("ns", "f0")
    files.write("ns", "f0", b"after\n")
    assert files.path("ns", "f0").read_bytes() == b"after\n"
    files.close()
    assert _open_under(tmp_path) == 0


def test_a_file_trimmed_under_an_open_descriptor_keeps_its_bound(tmp_path: Path) -> None:
    logs = LogFiles(tmp_path, max_bytes=4096, tenant_max_bytes=1 << 20, rate=MiB, burst=MiB)
    try:
        for i in range(500):
            logs.write("ns", "f", f"line {i:04d}\n".encode())
            assert logs.path("ns", "f").stat().st_size <= 4096
        text = logs.path("ns", "f").read_bytes()
        assert text.startswith(MARKER)
        assert text.endswith(b"line 0499\n")
        # the other bound: the tenant's, trimming a file another write holds open
        logs.tenant_max_bytes = 3000
        logs.write("ns", "g", b"g" * 1000 + b"\n")
        assert tenant_bytes(tmp_path, "ns") <= 3000
        logs.write("ns", "f", b"last\n")
        assert tenant_bytes(tmp_path, "ns") <= 3000
        assert logs.path("ns", "f").read_bytes().endswith(b"last\n")
    finally:
        logs.close()
