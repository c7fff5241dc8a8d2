"""The README's commands, typed as a new user would: scripts/run, then the CLI and curl.

The platform runs as a real process (`scripts/run` → `sless up` with embedded PostgreSQL
and bubblewrap workers); every CLI call is a real `sless` process. The user's config dir
is a temporary one so that `sless login` writes there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port
from tests.integration.sandbox.harness import built_runsc

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
SLESS = [str(Path(sys.executable).parent / "sless")]


def _uv_dirs() -> dict[str, str]:
    """uv's tool, tool-bin and cache directories as this process's environment has them."""

    def ask(*args: str) -> str:
        found = subprocess.run(["uv", *args], capture_output=True, text=True, check=True)
        return found.stdout.strip()

    return {
        "UV_TOOL_DIR": ask("tool", "dir"),
        "UV_TOOL_BIN_DIR": ask("tool", "dir", "--bin"),
        "UV_CACHE_DIR": ask("cache", "dir"),
    }


def _wheelhouse() -> str:
    found = os.environ.get("SLESS_TEST_WHEELHOUSE", "")
    if not found or not (Path(found) / ".complete").exists():
        pytest.fail(
            "run this test through scripts/test: it fetches the wheels of the examples'"
            " requirements.txt (SLESS_TEST_WHEELHOUSE), and the test reaches no index"
        )
    return found


class Platform:
    def __init__(self, home: Path, port: int) -> None:
        self.home = home
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "SLESS_URL": self.url,
        }
        self.env.pop("SLESS_ADMIN_TOKEN", None)
        self.env.pop("SLESS_TOKEN", None)
        # the machine's uv, its cache and its tools (semgrep) stay where they are with
        # another HOME: else scripts/run would install semgrep again from PyPI, and test
        # traffic goes only to loopback
        self.env["PATH"] = f"{Path.home() / '.local/bin'}:{os.environ.get('PATH', '')}"
        self.env.update(_uv_dirs())
        # examples/python-deps installs yarl: from the wheels scripts/test fetched, offline
        self.env.update({"UV_FIND_LINKS": _wheelhouse(), "UV_OFFLINE": "1"})
        self.output = home / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.output, "ab") as log:  # the child keeps its own copy
            self.process = subprocess.Popen(
                ["scripts/run", "--port", str(self.port)],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"sless up did not start:\n{self.output.read_text()[-3000:]}")
            time.sleep(0.3)

    def stop(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)

    def sless(self, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [*SLESS, *args],
            cwd=ROOT,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"sless {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
        return result


#: the quickstart under each isolation of embedded mode: gVisor where runsc is built, as the
#: security suite's gVisor leg (tests/security/conftest.py)
ISOLATIONS = ["bubblewrap"] + (["gvisor"] if built_runsc() is not None else [])


@pytest.fixture(params=ISOLATIONS)
def platform(request: pytest.FixtureRequest) -> Iterator[Platform]:
    # not pytest's tmp_path: another pytest session on the machine re-tightens
    # /tmp/pytest-of-<user> to 0700, which locks out the embedded PostgreSQL's own user
    home = Path(tempfile.mkdtemp(prefix="sless-e2e-"))
    p = Platform(home, free_port())
    if request.param == "gvisor":
        gvisor = built_runsc()
        assert gvisor is not None
        p.env.update({"SLESS_EMBEDDED_ISOLATION": "gvisor", "SLESS_SANDBOX_RUNSC": gvisor.runsc})
    try:
        p.start()
        if request.param == "gvisor":  # sless up says so, and never falls back
            assert "workers run under gVisor" in p.output.read_text()
        yield p
    finally:
        if p.process is not None and p.process.poll() is None:
            p.stop()
        shutil.rmtree(home, ignore_errors=True)


README = (ROOT / "README.md").read_text()


def _sample(command: str) -> list[str]:
    """The README's sample output under ``command``: its ``#   `` lines."""
    lines = README.splitlines()
    start = lines.index(command) + 1
    sample = []
    for line in lines[start:]:
        if not line.startswith("#   "):
            break
        sample.append(line.removeprefix("#   "))
    assert sample, f"no sample output under {command!r} in the README"
    return sample


_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _matches_readme(command: str, output: str) -> None:
    """Each sample line of the README matches a line of ``output``, in order; numbers,
    12-hex digests, invocation ids and the port may differ."""
    got = output.splitlines()
    at = 0
    for line in _sample(command):
        pattern = "".join(
            _UUID
            if re.fullmatch(_UUID, part)
            else "[0-9a-f]{12}"
            if re.fullmatch(r"[0-9a-f]{12}", part)
            else r"\d+"
            if part.isdigit()
            else re.escape(part)
            for part in re.split(rf"({_UUID}|[0-9a-f]{{12}}|\d+)", line)
        )
        while at < len(got) and not re.fullmatch(pattern, got[at]):
            at += 1
        assert at < len(got), f"the README shows {line!r} under {command!r}; it printed:\n{output}"
        at += 1


def test_readme_quickstart(platform: Platform) -> None:
    printed = platform.output.read_text()
    match = re.search(r"export SLESS_ADMIN_TOKEN=(\S+)", printed)
    assert match, printed
    admin_token = match.group(1)

    created = platform.sless("admin", "tenant", "create", "acme", SLESS_ADMIN_TOKEN=admin_token)
    token = re.search(r"token: (\S+)", created.stdout)
    assert token, created.stdout
    login = platform.sless("login", "--url", platform.url, "--token", token.group(1))
    assert "acme" in login.stdout
    config = platform.home / ".config/sless/config.json"
    assert config.stat().st_mode & 0o777 == 0o600
    assert "tenant: acme\nnamespace: sless-acme" in platform.sless("whoami").stdout

    deployed = platform.sless("deploy", "examples/hello-python", "--name", "hello")
    assert "hello is Ready" in deployed.stdout
    assert "phase: Ready" in deployed.stderr
    _matches_readme(
        "uv run sless deploy examples/hello-python --name hello",
        deployed.stderr + deployed.stdout,
    )

    _developer_loop(platform)

    answer = httpx.get(f"{platform.url}/fn/sless-acme/hello?name=Ada").json()
    assert answer == {"message": "Hello, Ada!", "function": "hello"}
    invoked = platform.sless("invoke", "hello", "--data", '{"name": "Grace"}')
    assert '"Hello, Grace!"' in invoked.stdout

    node = platform.sless("deploy", "examples/hello-node", "--name", "hello-node")
    assert "Ready" in node.stdout
    assert httpx.get(f"{platform.url}/fn/sless-acme/hello-node?name=Lin").json()["message"] == (
        "Hello, Lin!"
    )
    deps = platform.sless("deploy", "examples/python-deps", "--name", "parse-url")
    assert "Ready" in deps.stdout
    parsed = httpx.get(
        f"{platform.url}/fn/sless-acme/parse-url", params={"url": "http://h.example:81/p?q=1"}
    ).json()
    assert parsed == {
        "scheme": "http",
        "host": "h.example",
        "port": 81,
        "path": "/p",
        "query": {"q": "1"},
    }

    stored = subprocess.run(
        [*SLESS, "secret", "put", "dbpass", "--from-stdin"],
        cwd=ROOT,
        env=platform.env,
        input="pa55word",
        capture_output=True,
        text=True,
        check=True,
    )
    assert "secret dbpass stored" in stored.stdout
    login = platform.sless(
        "deploy", "examples/secret-python", "--name", "login", "--secret", "dbpass=DB_PASSWORD"
    )
    assert "login is Ready" in login.stdout
    checked = platform.sless("invoke", "login", "--data", '{"password": "pa55word"}')
    assert json.loads(checked.stdout) == {"match": True}
    assert "pa55word" not in platform.output.read_text()

    # a new spec is a new version; a rollback serves the old one again
    howdy = platform.sless(
        "deploy", "examples/hello-python", "--name", "hello", "--env", "GREETING=Howdy"
    )
    assert "hello is Ready" in howdy.stdout
    hello = f"{platform.url}/fn/sless-acme/hello?name=Ada"

    calls = 2  # of hello so far: the curl and the invoke above

    def answers(message: str) -> None:
        # Ready is written before the new workers take over (a moment later)
        nonlocal calls
        deadline = time.monotonic() + 30
        while True:
            calls += 1
            if httpx.get(hello).json()["message"] == message:
                return
            assert time.monotonic() < deadline, f"never answered {message!r}"
            time.sleep(0.2)

    answers("Howdy, Ada!")
    versions = platform.sless("versions", "hello").stdout.splitlines()
    assert [line.split()[0] for line in versions[1:]] == ["v2*", "v1"]
    rolled = platform.sless("rollback", "hello", "v1")
    assert "hello is Ready" in rolled.stdout
    answers("Hello, Ada!")

    listing = platform.sless("ls").stdout
    assert all(name in listing for name in ("hello", "hello-node", "parse-url"))
    assert "greeting Grace" in platform.sless("logs", "hello").stdout

    # errors are one line and a non-zero exit
    missing = platform.sless("invoke", "nope", check=False)
    assert missing.returncode != 0
    bad = platform.sless(
        "deploy", "examples", "--name", "Bad_Name", "--runtime", "python3.11", check=False
    )
    assert bad.returncode != 0
    assert "DNS-1123" in bad.stderr

    removed = platform.sless("rm", "hello-node")
    assert "deleted hello-node" in removed.stdout
    assert httpx.get(f"{platform.url}/fn/sless-acme/hello-node").status_code == 404

    # a clean stop flushes every invocation record; a restart finds them all
    assert platform.stop() == 0
    platform.start()
    assert "SLESS_ADMIN_TOKEN=" not in platform.output.read_text()[len(printed) :]
    rows = platform.sless("invocations", "--json", "--limit", "100").stdout
    assert rows.count('"function": "hello"') == calls
    assert rows.count('"function": "hello-node"') == 1
    assert rows.count('"function": "parse-url"') == 1
    # the function came back with the platform
    assert httpx.get(f"{platform.url}/fn/sless-acme/hello").status_code == 200


def _dev(platform: Platform, folder: Path) -> None:
    """``sless dev`` as the README shows it: a call, a save, the reload."""
    port = free_port()
    dev = subprocess.Popen(
        [*SLESS, "dev", "--port", str(port)],
        cwd=folder,
        env=platform.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def answer() -> str:
            for _ in range(400):
                try:
                    got = httpx.get(f"http://127.0.0.1:{port}/?name=Ada", timeout=30)
                except httpx.HTTPError:
                    got = None
                if got is not None and got.status_code == 200:
                    return str(got.json()["message"])
                time.sleep(0.25)
            raise AssertionError("sless dev never answered")

        assert answer() == "Hello, Ada!"
        handler = folder / "handler.py"
        handler.write_text(handler.read_text().replace("Hello", "Howdy"))
        for _ in range(400):
            if answer() == "Howdy, Ada!":
                break
            time.sleep(0.25)
        handler.write_text(handler.read_text().replace("Howdy", "Hello"))
        assert answer() in ("Howdy, Ada!", "Hello, Ada!")
    finally:
        dev.send_signal(signal.SIGINT)
        output, _ = dev.communicate(timeout=60)
    assert dev.returncode == 0, output
    assert "sless dev stopped" in output
    # the README shows the default isolation; sless dev runs under the platform's setting
    gvisor = platform.env.get("SLESS_EMBEDDED_ISOLATION") == "gvisor"
    isolation = "gVisor" if gvisor else "bubblewrap"
    assert f", {isolation}, 128 MiB" in output
    _matches_readme("uv run sless dev", output.replace(f", {isolation},", ", bubblewrap,"))


def _developer_loop(platform: Platform) -> None:
    """The README's "developer's loop", in a scratch folder, its outputs as shown."""
    scratch = Path(tempfile.mkdtemp(prefix="sless-loop-"))
    try:

        def sless(*args: str, cwd: Path) -> str:
            done = subprocess.run(
                [*SLESS, *args], cwd=cwd, env=platform.env, capture_output=True, text=True
            )
            assert done.returncode == 0, f"sless {' '.join(args)}:\n{done.stdout}{done.stderr}"
            return done.stdout + done.stderr

        command = "uv run sless new greeter --runtime python3.11 --template http"
        _matches_readme(command, sless(*command.split()[3:], cwd=scratch))
        folder = scratch / "greeter"
        tested = subprocess.run(
            [sys.executable, "test_handler.py"], cwd=folder, capture_output=True, text=True
        )
        assert tested.stdout == "ok\n", tested.stderr
        _dev(platform, folder)
        assert "greeter is Ready" in sless("deploy", cwd=folder)
        shown = re.search(r"sless invoke greeter +# (.*)", README)
        assert shown is not None
        assert json.loads(sless("invoke", "greeter", cwd=folder)) == json.loads(shown.group(1))
        described = sless("describe", "greeter", cwd=folder)
        assert "Phase:       Ready" in described
        _matches_readme("uv run sless describe greeter", described)
        assert "--tail 20 counts lines" in README
        sless("logs", "greeter", "--tail", "20", cwd=folder)
        sless("rm", "greeter", cwd=folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
