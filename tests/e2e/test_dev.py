"""``sless new`` → ``sless dev``: edit, save, see it reload (issue 31), no platform needed.

The function runs in the production sandbox: its worker is a bubblewrap process running
the runtime server as an unprivileged uid (not root), under the spec's memory limit; a save
reloads it after the upload validation; a save that validation rejects leaves the previous
code serving; each call prints its line (status, invocation id) after the function's
output; Ctrl-C stops it and leaves no worker and no files behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

SLESS = str(Path(sys.executable).parent / "sless")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Dev:
    """A running ``sless dev`` and what it printed so far."""

    def __init__(self, directory: Path, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [SLESS, "dev", "--port", str(port)],
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def until(self, what: Callable[[], bool], doing: str, tries: int = 600) -> None:
        """Poll ``what`` (each try a quarter second apart) until it holds."""
        for _ in range(tries):
            if what():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.25)
        raise AssertionError(f"sless dev never {doing}:\n{self.output}")

    def get(self, query: str = "") -> httpx.Response | None:
        try:
            return httpx.get(self.url + "/" + query, timeout=30)
        except httpx.HTTPError:
            return None

    def answers(self, text: str, query: str = "") -> Callable[[], bool]:
        def check() -> bool:
            response = self.get(query)
            return response is not None and response.status_code == 200 and text in response.text

        return check


@pytest.fixture
def dev(tmp_path: Path) -> Iterator[Callable[[Path], Dev]]:
    if shutil.which("bwrap") is None:
        pytest.fail("sless dev needs bubblewrap")
    started: list[Dev] = []

    def start(directory: Path) -> Dev:
        running = Dev(directory, _free_port())
        started.append(running)
        return running

    yield start
    for running in started:
        if running.process.poll() is None:  # Ctrl-C: its worker and files go too
            running.process.send_signal(signal.SIGINT)
            try:
                running.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                running.process.kill()
                running.process.wait()
        running._reader.join(timeout=10)
        assert running.process.stdout is not None
        running.process.stdout.close()


def _processes() -> dict[int, tuple[int, str, int]]:
    """``pid → (parent pid, command line, real uid)`` of every process."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                status = (entry / "status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            found[int(entry.name)] = (
                int(fields["PPid"]),
                command,
                int(fields["Uid"].split()[0]),
            )
    return found


def _workers(pid: int) -> list[tuple[str, int]]:
    """``(command line, real uid)`` of the processes under ``pid``."""
    table = _processes()
    below, found = {pid}, []
    for _ in range(10):  # a tree of a few levels: bubblewrap, its init, the runtime
        for child, (parent, command, uid) in table.items():
            if parent in below and child not in below:
                below.add(child)
                found.append((command, uid))
    return found


def test_new_then_dev_reloads_on_save(tmp_path: Path, dev: Callable[[Path], Dev]) -> None:
    subprocess.run([SLESS, "new", "greeter"], cwd=tmp_path, check=True, capture_output=True)
    folder = tmp_path / "greeter"
    handler = folder / "handler.py"
    running = dev(folder)

    running.until(running.answers("Hello, Ada!", "?name=Ada"), "served the template")
    assert "validation verdict: allow" in running.output
    assert "greeter serves at" in running.output
    assert "128 MiB" in running.output
    # the real sandbox: bubblewrap running the runtime server, as a uid that is not root
    below = _workers(running.process.pid)
    assert any(c.startswith("bwrap") for c, _ in below), below
    servers = [(c, uid) for c, uid in below if "/runtime/server.py" in c]
    assert servers, f"no runtime server under sless dev: {below}"
    if os.geteuid() == 0:
        assert all(uid != 0 for _, uid in servers)

    # edit and save: the output of the new code and its call line print live
    text = handler.read_text()
    handler.write_text(
        text.replace("Hello", "Howdy").replace(
            '    name = event["query"]',
            '    print("greeting", event["query"])\n    name = event["query"]',
        )
    )
    running.until(running.answers("Howdy, Bo!", "?name=Bo"), "reloaded the saved code")
    assert "handler.py changed: reloading" in running.output
    # "HH:MM:SS | [<invocation id>] greeting ...": the runtime names the call of each line
    running.until(lambda: "] greeting {'name': 'Bo'}" in running.output, "printed the output")
    calls = [line for line in running.lines if line.split()[1:3] == ["GET", "/?name=Bo"]]
    assert calls
    assert "-> 200 in" in calls[-1]
    response = running.get("?name=Bo")
    assert response is not None
    assert response.headers["x-sless-invocation-id"]
    called = response.headers["x-sless-invocation-id"]
    running.until(lambda: called in running.output, "printed the call")
    running.until(
        lambda: f"| [{called}] greeting {{'name': 'Bo'}}" in running.output,
        "printed the output with its call",
    )

    # a save that validation rejects: said so, and the previous code keeps serving
    handler.write_text(handler.read_text().replace("return {", "return {{"))
    running.until(lambda: "not reloaded" in running.output, "refused the broken save")
    assert "validation verdict: reject" in running.output
    assert running.answers("Howdy, Cy!", "?name=Cy")()

    # a sless.yaml error names its line, and the previous code still serves
    project = folder / "sless.yaml"
    project.write_text(project.read_text().replace("memory_mb: 128", "memory_mb: 999999"))
    running.until(lambda: "sless.yaml:" in running.output, "reported the sless.yaml error")
    assert "memory_mb" in running.output.split("sless.yaml:")[-1]
    assert running.answers("Howdy, Di!", "?name=Di")()

    running.process.send_signal(signal.SIGINT)
    assert running.process.wait(timeout=60) == 0
    running._reader.join(timeout=10)
    assert "sless dev stopped" in running.output
    assert not [c for c, _ in _workers(running.process.pid) if "server.py" in c]


def test_dev_runs_with_the_specs_memory_limit(tmp_path: Path, dev: Callable[[Path], Dev]) -> None:
    """A function that allocates past its spec's memory_mb (128: 300 MiB) fails as
    deployed code does (the sandbox's address-space limit), where an unbounded process
    would not."""
    subprocess.run([SLESS, "new", "hog"], cwd=tmp_path, check=True, capture_output=True)
    folder = tmp_path / "hog"
    (folder / "handler.py").write_text(
        "def handle(event, context):\n"
        "    if event['query'].get('big'):\n"
        "        block = bytearray(300 * 1024 * 1024)\n"
        "        return {'len': len(block)}\n"
        "    return {'ok': True}\n"
    )
    running = dev(folder)
    running.until(running.answers('"ok"'), "served the function")
    response = running.get("?big=1")
    assert response is not None
    assert response.status_code >= 500
    assert response.json()["error"]["code"] == "handler_error"
    # the runtime server's traceback, in the function's output as when deployed
    running.until(lambda: "MemoryError" in running.output, "printed the MemoryError")
    running.until(running.answers('"ok"'), "served again after the failed call")


NETWORK_PROBE = """\
import os
import socket
import urllib.request


def handle(event, context):
    port = int(event["query"]["port"])
    out = {"proxy": os.environ.get("HTTP_PROXY")}
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        out["direct"] = "connected"
    except OSError:
        out["direct"] = "refused"
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/?name=x", timeout=10)
        out["via_proxy"] = "reached"
    except Exception:
        out["via_proxy"] = "refused"
    return out
"""


def test_dev_gives_the_function_only_its_egress(tmp_path: Path, dev: Callable[[Path], Dev]) -> None:
    """The function runs in its own network namespace (the host's loopback, where sless dev
    itself listens, is out of reach) and reaches out only through the platform's egress
    proxy, which refuses what the allowlist does not name (and loopback always)."""
    subprocess.run([SLESS, "new", "probe"], cwd=tmp_path, check=True, capture_output=True)
    folder = tmp_path / "probe"
    (folder / "handler.py").write_text(NETWORK_PROBE)
    project = folder / "sless.yaml"
    project.write_text(project.read_text().replace("egress: []", "egress: [allowed.example:443]"))
    running = dev(folder)
    port = running.url.rsplit(":", 1)[1]
    running.until(lambda: running.get(f"?port={port}") is not None, "served")
    running.until(
        lambda: (r := running.get(f"?port={port}")) is not None and r.status_code == 200,
        "answered the probe",
    )
    assert "egress: allowed.example:443" in running.output
    answer = running.get(f"?port={port}")
    assert answer is not None
    result = answer.json()
    assert result["direct"] == "refused"
    assert result["proxy"]
    assert result["via_proxy"] == "refused"
    # no call of the probe reached sless dev's own port from inside the sandbox
    assert "/?name=x" not in running.output


def test_dev_installs_requirements_with_the_platforms_builder(
    tmp_path: Path, dev: Callable[[Path], Dev], monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/python-deps (yarl from requirements.txt) under sless dev: the builder
    installs it, from the wheels scripts/test fetched (no test reaches an index)."""
    wheels = os.environ.get("SLESS_TEST_WHEELHOUSE", "")
    if not wheels or not (Path(wheels) / ".complete").exists():
        pytest.fail("run this test through scripts/test: it needs SLESS_TEST_WHEELHOUSE")
    monkeypatch.setenv("UV_FIND_LINKS", wheels)
    monkeypatch.setenv("UV_OFFLINE", "1")
    folder = tmp_path / "parse-url"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "python-deps", folder)
    running = dev(folder)
    running.until(
        running.answers('"host":"h.example"', "?url=http://h.example:81/p"), "served with yarl"
    )
