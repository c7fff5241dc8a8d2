"""The log stream (``GET .../logs/stream``): what a new read adds past the text sent
before, and the invocation id a line names."""

from __future__ import annotations

import json

from sless.gateway.routers.logs import SKIPPED, after, event, grown


def test_a_growing_log_sends_only_what_was_added() -> None:
    assert after("a\nb\n", "a\nb\nc\n") == "c\n"
    assert after("tick\ntick\n", "tick\ntick\ntick\n") == "tick\n"
    assert after("a\n", "a\n") == ""
    assert after("", "first\n") == "first\n"


def test_a_sliding_window_aligns_on_the_last_bytes() -> None:
    log = "".join(f"line {i}\n" for i in range(1000))
    before, now = log[:5000][-3000:], log[:5200][-3000:]
    assert after(before, now) == log[5000:5200]


def test_output_past_the_window_is_marked_not_skipped_silently() -> None:
    assert after("x" * 10 + "old\n", "entirely new\n").startswith(SKIPPED)


def _data(frame: bytes) -> dict[str, object]:
    assert frame.startswith(b"data: ")
    assert frame.endswith(b"\n\n")
    parsed: dict[str, object] = json.loads(frame[len(b"data: ") :])
    return parsed


def test_each_line_names_its_invocation_where_the_line_says_it() -> None:
    call = "5f3c9a10-1234-4abc-8def-0123456789ab"
    traceback = _data(event(f"[{call}] Traceback (most recent call last):", "T"))
    assert traceback == {
        "time": "T",
        "invocation_id": call,
        "line": f"[{call}] Traceback (most recent call last):",
    }
    platform = _data(event(f"[sless] call {call}: timed out after 3 s", "T"))
    assert platform["invocation_id"] == call
    printed = _data(event("hello from the handler", None))
    assert printed == {"time": None, "invocation_id": None, "line": "hello from the handler"}
    # a line that only looks like one: no id made up from it
    assert _data(event("[not-a-uuid] x", "T"))["invocation_id"] is None


def test_a_line_cannot_break_out_of_its_event() -> None:
    """A function writes what it likes: a line with a CR, or a fake ``data:`` field, stays
    inside one event's JSON (no second event injected into the stream)."""
    frame = event('x\r\ndata: {"line": "forged"}\r\n\r\n', "T")
    assert frame.count(b"\n\n") == 1
    assert b"\r" not in frame
    assert _data(frame)["line"] == 'x\r\ndata: {"line": "forged"}\r\n\r\n'


def test_each_pods_part_grows_on_its_own() -> None:
    """Kubernetes mode answers one part per pod, newest first: a new line of the newest
    pod lands in the middle of the text and is still sent; a new pod's lines too."""
    before = "==> fn-b <==\nb1\n\n==> fn-a <==\na1\na2\n"
    now = "==> fn-b <==\nb1\nb2\n\n==> fn-a <==\na1\na2\n"
    assert grown(before, now) == "b2\n"
    with_new_pod = "==> fn-c <==\nc1\n\n" + now
    assert grown(now, with_new_pod) == "c1\n"
