"""A failed build's message: its ``build of <sha12> failed:`` prefix, the lines that say
what failed, plain text (a build log's colour codes and terminal controls never reach a
status, hence never a tenant's terminal)."""

from __future__ import annotations

from sless.operator.building import failure_message
from sless.operator.function_status import _short, plain

SHA = "ab" * 32


def test_prefix_failing_lines_and_last_lines_are_kept() -> None:
    log = "".join(f"\x1b[36mINFO\x1b[0m[0001] step {i}\n" for i in range(500))
    log += "\x1b[31mERRO\x1b[0m[0003] error building image: npm ERR! 404 left-pad\n"
    log += "exit status 1\n"
    message = _short(failure_message(SHA, log))
    assert message.startswith(f"build of {SHA[:12]} failed:\n")
    assert "ERRO[0003] error building image: npm ERR! 404 left-pad" in message
    assert message.rstrip().endswith("exit status 1")
    assert "\x1b" not in message
    assert len(message) <= 2010


def test_a_long_message_keeps_its_head() -> None:
    text = "build of x failed:\n" + "error: y\n" * 1000
    assert _short(text).startswith("build of x failed:\n")
    assert len(_short(text)) <= 2010


def test_terminal_controls_are_removed() -> None:
    hostile = "a\x1b]0;owned title\x07b\x1b[2J\x1b[Hc\rd\x08e\x00f\x9bg\x1bPh"
    cleaned = plain(hostile)
    assert cleaned == "abc\ndefgh"  # ESC P (a DCS introducer) goes with its ESC
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in cleaned)


def test_a_log_without_failing_lines_shows_its_last_lines() -> None:
    message = failure_message(SHA, "one\ntwo\nbuild log unavailable: the log is empty\n")
    assert (
        message == f"build of {SHA[:12]} failed:\none\ntwo\nbuild log unavailable: the log is empty"
    )
