"""``sless logs -f``: what a new read adds past the text printed before."""

from __future__ import annotations

from sless.cli.following import _after


def test_a_growing_log_prints_only_what_was_added() -> None:
    assert _after("a\nb\n", "a\nb\nc\n") == "c\n"
    assert _after("tick\ntick\n", "tick\ntick\ntick\n") == "tick\n"
    assert _after("a\n", "a\n") == ""
    assert _after("", "first\n") == "first\n"


def test_a_sliding_window_aligns_on_the_last_bytes() -> None:
    log = "".join(f"line {i}\n" for i in range(1000))
    before, now = log[:5000][-3000:], log[:5200][-3000:]
    assert _after(before, now) == log[5000:5200]


def test_output_past_the_window_is_marked_not_skipped_silently() -> None:
    assert _after("x" * 10 + "old\n", "entirely new\n").startswith("--- (more output")
