"""``--check`` and start-up failures of both runtimes: one clear line, no host paths."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.unit.runtimes.harness import base_env, runtime_argv

EXT = {"python3.11": "py", "nodejs20": "js"}

CASES: dict[str, dict[str, tuple[str, str]]] = {
    # name: runtime -> (handler.<ext> source, expected fragment of the message)
    "syntax_error": {
        "python3.11": (
            "def handle(event, context)\n    return 1\n",
            "SyntaxError in handler.py line 1",
        ),
        "nodejs20": ("exports.handle = (event, context => {\n", "SyntaxError in handler.js"),
    },
    "import_error": {
        "python3.11": ("import leftpad_missing_pkg\n", "ModuleNotFoundError: No module named"),
        "nodejs20": (
            "require('leftpad-missing-pkg');\n",
            "Cannot find module 'leftpad-missing-pkg'",
        ),
    },
    "raises_at_import": {
        "python3.11": ("raise RuntimeError('boom at import')\n", "RuntimeError: boom at import"),
        "nodejs20": ("throw new TypeError('boom at import');\n", "TypeError: boom at import"),
    },
    "missing_entrypoint": {
        "python3.11": ("def other(event, context):\n    return 1\n", "has no attribute 'handle'"),
        "nodejs20": ("exports.other = () => 1;\n", "does not export 'handle'"),
    },
    "not_callable": {
        "python3.11": ("handle = 42\n", "is not callable"),
        "nodejs20": ("exports.handle = 42;\n", "is not a function"),
    },
}


def run_check(runtime: str, code: Path, entrypoint: str = "handler.handle") -> tuple[int, str]:
    result = subprocess.run(
        runtime_argv(runtime, "--check"),
        env=base_env(code, SLESS_ENTRYPOINT=entrypoint),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return result.returncode, result.stdout


@pytest.mark.parametrize("runtime", ["python3.11", "nodejs20"])
def test_check_ok_prints_one_line_even_when_the_module_prints(runtime: str, tmp_path: Path) -> None:
    source = {
        "python3.11": "print('noise at import')\ndef handle(event, context):\n    return 1\n",
        "nodejs20": "console.log('noise at import');\nexports.handle = async () => 1;\n",
    }[runtime]
    (tmp_path / f"handler.{EXT[runtime]}").write_text(source)
    code, out = run_check(runtime, tmp_path)
    assert code == 0
    assert out == "ok: handler.handle is callable\n"


@pytest.mark.parametrize("runtime", ["python3.11", "nodejs20"])
def test_check_missing_handler_file(runtime: str, tmp_path: Path) -> None:
    code, out = run_check(runtime, tmp_path)
    assert code == 1
    assert out.startswith("error: handler file 'handler.")
    assert "not found in the code directory" in out
    assert str(tmp_path) not in out


@pytest.mark.parametrize("runtime", ["python3.11", "nodejs20"])
def test_check_invalid_entrypoint(runtime: str, tmp_path: Path) -> None:
    (tmp_path / f"handler.{EXT[runtime]}").write_text("")
    code, out = run_check(runtime, tmp_path, entrypoint="../etc/passwd.x")
    assert code == 1
    assert "invalid entrypoint" in out


@pytest.mark.parametrize("runtime", ["python3.11", "nodejs20"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_check_reports_load_failures(runtime: str, case: str, tmp_path: Path) -> None:
    source, expected = CASES[case][runtime]
    (tmp_path / f"handler.{EXT[runtime]}").write_text(source)
    code, out = run_check(runtime, tmp_path)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert expected in lines[0]
    assert str(tmp_path) not in lines[0]  # shown to the tenant: no host paths
    assert len(lines[0]) <= 520


@pytest.mark.parametrize("runtime", ["python3.11", "nodejs20"])
def test_server_refuses_to_start_with_a_broken_handler(runtime: str, tmp_path: Path) -> None:
    (tmp_path / f"handler.{EXT[runtime]}").write_text(CASES["raises_at_import"][runtime][0])
    sock = tmp_path / "w.sock"
    result = subprocess.run(
        runtime_argv(runtime),
        env=base_env(tmp_path, SLESS_SOCKET=str(sock)),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 1
    assert "cannot start" in result.stderr
    assert "boom at import" in result.stderr
    assert not sock.exists()  # never bound: "socket accepts" keeps meaning "ready"
