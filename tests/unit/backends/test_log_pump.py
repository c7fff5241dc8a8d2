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

from sless.backends.local.logfiles import MARKER, LogFiles

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
