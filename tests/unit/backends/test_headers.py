"""The proxy's header rule (RFC 9110 7.6.1), both directions, as plain functions."""

from sless.backends import headers


def test_a_header_named_in_connection_does_not_reach_the_function() -> None:
    sent = [("Connection", "X-Secret"), ("X-Secret", "s"), ("X-Kept", "k")]
    assert headers.from_caller(sent) == [("X-Kept", "k")]
    assert headers.to_function(sent) == [("X-Kept", "k")]


def test_every_connection_header_counts_and_names_compare_case_insensitively() -> None:
    sent = [
        ("connection", "keep-alive, x-one"),
        ("CONNECTION", " X-Two ,,"),
        ("x-ONE", "1"),
        ("X-two", "2"),
        ("Keep-Alive", "timeout=5"),
        ("x-three", "3"),
    ]
    assert headers.from_caller(sent) == [("x-three", "3")]


def test_credentials_framing_and_platform_headers_never_come_from_a_caller() -> None:
    sent = [
        ("Authorization", "Bearer t"),
        ("Proxy-Authorization", "Basic x"),
        ("Host", "evil"),
        ("Content-Length", "5"),
        ("Transfer-Encoding", "chunked"),
        ("TE", "trailers"),
        ("Upgrade", "websocket"),
        ("sless-trigger", "cron"),
        ("X-Sless-Deadline", "0"),
        ("X-Sless-Invocation-Id", "spoofed"),
        ("Accept", "*/*"),
    ]
    assert headers.from_caller(sent) == [("Accept", "*/*")]


def test_the_platforms_own_trigger_headers_still_reach_the_function() -> None:
    sent = [("content-type", "application/json"), ("sless-trigger", "cron:nightly")]
    assert headers.to_function(sent) == sent


def test_a_header_named_in_the_functions_connection_does_not_reach_the_caller() -> None:
    answer = [
        (b"connection", b"X-Leak, keep-alive"),
        (b"x-leak", b"internal"),
        (b"Keep-Alive", b"timeout=5"),
        (b"content-length", b"9"),
        (b"server", b"worker"),
        (b"x-sless-invocation-id", b"spoofed"),
        (b"content-type", b"application/json"),
    ]
    assert headers.from_function(answer) == [(b"content-type", b"application/json")]
