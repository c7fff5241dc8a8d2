"""``LogFiles.tail(since=)`` (``sless logs --since 10m``): what was written at or after a
time, from the marks of the file's writes; never less than that when unsure."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sless.backends.local import logfiles
from sless.backends.local.logfiles import LogFiles

MiB = 1024 * 1024


@pytest.fixture
def files(tmp_path: Path) -> Iterator[LogFiles]:
    logs = LogFiles(tmp_path, max_bytes=MiB, tenant_max_bytes=MiB, rate=64 * MiB, burst=64 * MiB)
    yield logs
    logs.close()


def _write_at(files: LogFiles, text: str, at: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logfiles.time, "time", lambda: at)
    files.write("ns", "fn", text.encode())


def test_since_reads_from_the_first_write_at_or_after_it(
    files: LogFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_at(files, "old 1\nold 2\n", 1000.0, monkeypatch)
    _write_at(files, "middle\n", 2000.0, monkeypatch)
    _write_at(files, "new\n", 3000.0, monkeypatch)
    tail = files.tail
    assert asyncio.run(tail("ns", "fn", MiB, 1500.0)) == "middle\nnew\n"
    assert asyncio.run(tail("ns", "fn", MiB, 2000.0)) == "middle\nnew\n"
    assert asyncio.run(tail("ns", "fn", MiB, 2500.0)) == "new\n"
    assert asyncio.run(tail("ns", "fn", MiB, 3500.0)) == ""
    assert asyncio.run(tail("ns", "fn", MiB, 10.0)) == "old 1\nold 2\nmiddle\nnew\n"
    assert asyncio.run(tail("ns", "fn", MiB, None)) == "old 1\nold 2\nmiddle\nnew\n"
    # the tail bound still holds
    assert asyncio.run(tail("ns", "fn", 4, 1500.0)) == "new\n"


def test_a_trimmed_file_answers_its_whole_window_not_less(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = LogFiles(tmp_path, max_bytes=1024, tenant_max_bytes=MiB, rate=MiB, burst=MiB)
    try:
        _write_at(small, "a" * 300 + "\n", 1000.0, monkeypatch)
        _write_at(small, "b" * 300 + "\n", 2000.0, monkeypatch)
        _write_at(small, "c" * 300 + "\n", 3000.0, monkeypatch)
        # past max_bytes: the oldest lines go, the marks (their offsets moved) with them
        _write_at(small, "d" * 300 + "\n", 4000.0, monkeypatch)
        text = asyncio.run(small.tail("ns", "fn", MiB, 3500.0))
        assert "d" * 300 in text
        assert text.startswith("d") or text.startswith("[earlier output dropped")
        # asked from a time before every mark left: all that is there
        kept = asyncio.run(small.tail("ns", "fn", MiB, None))
        assert asyncio.run(small.tail("ns", "fn", MiB, 0.0)) == kept
    finally:
        small.close()


def test_marks_are_bounded_per_file(files: LogFiles) -> None:
    for i in range(logfiles.MAX_MARKS + 10):
        files.write("ns", "fn", f"{i}\n".encode())
    marks = files._marks[files.path("ns", "fn")]
    assert len(marks) == logfiles.MAX_MARKS
    # a time older than the oldest mark kept: from the start of the file, not a guess
    assert asyncio.run(files.tail("ns", "fn", MiB, time.time() - 3600)).startswith("0\n")


def test_lines_carry_the_time_of_the_write_that_ended_them(
    files: LogFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_at(files, "old 1\nold 2\nhalf ", 1000.0, monkeypatch)
    _write_at(files, "done\nmiddle\n", 2000.0, monkeypatch)
    _write_at(files, "new\nunfinished", 3000.0, monkeypatch)
    lines = asyncio.run(files.lines("ns", "fn", MiB))
    assert lines == [
        ("old 1", 1000.0),
        ("old 2", 1000.0),
        ("half done", 2000.0),
        ("middle", 2000.0),
        ("new", 3000.0),
    ]
    assert asyncio.run(files.lines("ns", "fn", MiB, 2500.0)) == [("new", 3000.0)]
    # a window that starts mid-line: the fragment is a line too, with its write's time
    assert asyncio.run(files.lines("ns", "fn", 20))[0] == ("iddle", 2000.0)


def test_lines_written_before_the_marks_have_no_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = LogFiles(tmp_path, max_bytes=MiB, tenant_max_bytes=MiB, rate=MiB, burst=MiB)
    _write_at(first, "before a restart\n", 1000.0, monkeypatch)
    first.close()
    # a new gateway: the file is there, its marks are not
    files = LogFiles(tmp_path, max_bytes=MiB, tenant_max_bytes=MiB, rate=MiB, burst=MiB)
    try:
        assert asyncio.run(files.lines("ns", "fn", MiB)) == [("before a restart", None)]
        _write_at(files, "after it\n", 2000.0, monkeypatch)
        assert asyncio.run(files.lines("ns", "fn", MiB)) == [
            ("before a restart", None),
            ("after it", 2000.0),
        ]
    finally:
        files.close()


def test_forgotten_marks_leave_their_lines_without_time(
    files: LogFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logfiles, "MAX_MARKS", 2)
    files.remove("ns", "fn")
    for n in range(3):
        _write_at(files, f"line {n}\n", 1000.0 + n, monkeypatch)
    # the deque keeps the marks of lines 1 and 2; line 1's write's start is forgotten
    assert [at for _, at in asyncio.run(files.lines("ns", "fn", MiB))] == [None, None, 1002.0]
