"""``sless new`` → ``sless deploy`` (no arguments, in the folder) → the call its README
shows, for every template and runtime (issue 31), against a real ``sless up``.

Also: ``sless.yaml``'s triggers are created, a bad ``sless.yaml`` stops the deploy with
``sless.yaml:LINE:``, and a refused first upload leaves no function behind.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.faults.harness import Platform

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

SLESS = str(Path(sys.executable).parent / "sless")


class User:
    def __init__(self, platform: Platform, token: str, home: Path) -> None:
        self.env = {
            **os.environ,
            "SLESS_URL": platform.url,
            "SLESS_TOKEN": token,
            "XDG_CONFIG_HOME": str(home / "config"),
        }
        self.url = platform.url

    def sless(
        self, *args: str, cwd: Path, check: bool = True, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [SLESS, *args], cwd=cwd, env=self.env, input=stdin, capture_output=True, text=True
        )
        if check and result.returncode != 0:
            raise AssertionError(f"sless {' '.join(args)}:\n{result.stdout}{result.stderr}")
        return result


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[User]:
    import shutil
    import signal
    import tempfile

    from tests.faults.harness import postmasters

    home = Path(tempfile.mkdtemp(prefix="sless-e2e-"))
    home.chmod(0o755)
    platform = Platform(home / "data")
    try:
        platform.start()
        tenant = platform.tenant("dev")
        yield User(platform, tenant.token, home)
    finally:
        platform.stop()
        for pid in postmasters(home / "data" / "pg"):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("runtime", ["python3.11", "nodejs20"])
@pytest.mark.parametrize("template", ["http", "cron", "rabbitmq", "async"])
def test_every_template_deploys_and_answers(
    user: User, tmp_path: Path, runtime: str, template: str
) -> None:
    name = f"{template}-{runtime.replace('.', '')}"
    user.sless("new", name, "--runtime", runtime, "--template", template, cwd=tmp_path)
    folder = tmp_path / name
    readme = (folder / "README.md").read_text()
    assert len(readme.splitlines()) == 5
    if template == "rabbitmq":  # the README's first step
        assert f"sless secret put {name}-mq" in readme
        user.sless(
            "secret",
            "put",
            f"{name}-mq",
            "--from-stdin",
            cwd=folder,
            stdin="amqp://guest:guest@127.0.0.1:9/",
        )
    deployed = user.sless("deploy", cwd=folder)  # no arguments: this folder, its sless.yaml
    assert f"{name} is Ready" in deployed.stdout, deployed.stderr
    if template == "http":
        assert f"sless invoke {name}" in readme
        answer = json.loads(user.sless("invoke", name, cwd=folder).stdout)
        assert answer == {"message": "Hello, world!", "function": name}
        ada = httpx.get(f"{user.url}/fn/sless-dev/{name}", params={"name": "Ada"}).json()
        assert ada["message"] == "Hello, Ada!"
    elif template == "async":
        command = readme.splitlines()[-1].split("`")[1].removeprefix("sless ")
        assert command.startswith(f"invoke {name} --async --wait")
        answer = json.loads(
            user.sless(
                "invoke", name, "--async", "--wait", "--data", '{"seconds": 0.2}', cwd=folder
            ).stdout
        )
        assert answer == {"slept": 0.2}
    else:
        trigger = f"{name}-tick" if template == "cron" else f"{name}-queue"
        assert trigger in user.sless("trigger", "list", cwd=folder).stdout
        body = '{"job": "by-hand"}' if template == "cron" else "-"
        answer = json.loads(
            user.sless("invoke", name, "--data", body, cwd=folder, stdin='{"n": 1}').stdout
        )
        assert answer == ({"ticked": "by-hand"} if template == "cron" else {"received": {"n": 1}})


@pytest.mark.parametrize(
    ("runtime", "template"),
    [
        *[(r, t) for r in ("python3.11", "nodejs20") for t in ("lambda", "openfaas", "knative")],
        ("python3.11", "asgi"),
        ("python3.11", "wsgi"),
    ],
)
def test_every_interface_template_deploys_and_answers(
    user: User, tmp_path: Path, runtime: str, template: str
) -> None:
    """A function written to a peer's contract (issue 33): the README's test, sless deploy,
    and the call the README shows."""
    name = f"{template}-{runtime.replace('.', '')}"
    user.sless("new", name, "--runtime", runtime, "--template", template, cwd=tmp_path)
    folder = tmp_path / name
    readme = (folder / "README.md").read_text()
    assert len(readme.splitlines()) == 5
    own_test = readme.splitlines()[3].split("`")[1].split()
    command = [sys.executable if own_test[0] == "python" else "node", *own_test[1:]]
    subprocess.run(command, cwd=folder, check=True, capture_output=True)
    deployed = user.sless("deploy", cwd=folder)
    assert f"{name} is Ready" in deployed.stdout, deployed.stderr
    path = readme.splitlines()[-1].split("`")[-2]
    response = httpx.get(f"{user.url}/fn/sless-dev/{name}{path}")
    assert response.status_code == 200, response.text
    assert response.json()["message"] == "Hello, Ada!"


def test_flags_override_the_project_file(user: User, tmp_path: Path) -> None:
    user.sless("new", "over", cwd=tmp_path)
    user.sless("deploy", "--memory", "256", "--name", "over2", cwd=tmp_path / "over")
    listing = user.sless("ls", cwd=tmp_path).stdout
    assert "over2" in listing
    function = httpx.get(
        f"{user.url}/v1/namespaces/sless-dev/functions/over2",
        headers={"Authorization": f"Bearer {user.env['SLESS_TOKEN']}"},
    ).json()
    assert function["spec"]["memory_mb"] == 256


def test_a_bad_project_file_stops_the_deploy_with_its_line(user: User, tmp_path: Path) -> None:
    (tmp_path / "handler.py").write_text("def handle(event, context):\n    return 1\n")
    (tmp_path / "sless.yaml").write_text("name: bad\nruntime: python3.11\nmemory_mb: 9000\n")
    result = user.sless("deploy", cwd=tmp_path, check=False)
    assert result.returncode == 1
    assert "sless.yaml:3: memory_mb: Input should be less than or equal to 4096" in result.stderr
    assert "bad" not in user.sless("ls", cwd=tmp_path).stdout


def test_a_refused_first_upload_leaves_no_function(user: User, tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("x = 1\n")  # no handler.py: the entrypoint is missing
    (tmp_path / "sless.yaml").write_text("name: refused\nruntime: python3.11\n")
    result = user.sless("deploy", cwd=tmp_path, check=False)
    assert result.returncode == 4, result.stderr
    assert "the first upload was refused; the function is removed" in result.stderr
    assert "refused" not in user.sless("ls", cwd=tmp_path).stdout


#: what ``sless logs`` may put before a line: its time, then the call's id
_PREFIX = re.compile(r"^(?P<stamp>\d\d:\d\d:\d\d\.\d{3}Z )?(?:\[[0-9a-f-]{36}\] )?")


def _said(line: str) -> tuple[str, str]:
    """(the time the line carries or "", what the function printed)."""
    found = _PREFIX.match(line)
    assert found is not None
    return (found.group("stamp") or "").strip(), line[found.end() :]


def test_logs_follow_shows_a_new_call_and_tail_counts_lines(user: User, tmp_path: Path) -> None:
    user.sless("new", "followed", "--template", "cron", cwd=tmp_path)
    user.sless("deploy", cwd=tmp_path / "followed")
    for n in range(3):
        user.sless("invoke", "followed", "--data", json.dumps({"job": f"early{n}"}), cwd=tmp_path)
    tail = user.sless("logs", "followed", "--tail", "2", cwd=tmp_path).stdout
    said = [_said(line)[1].split(" (")[0] for line in tail.splitlines()]
    assert said == ["tick early1", "tick early2"]
    follower = subprocess.Popen(
        [SLESS, "logs", "followed", "-f", "--tail", "1"],
        env=user.env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert follower.stdout is not None
        # the last line first: the follower has read the log, what comes next is new
        assert _said(follower.stdout.readline())[1].startswith("tick early2 (")
        user.sless("invoke", "followed", "--data", '{"job": "late"}', cwd=tmp_path)
        # a new line comes after the time the gateway read it: 04:06:26.920Z tick late (...)
        stamp, line = _said(follower.stdout.readline())  # the test's timeout
        while line.startswith("tick tick ("):  # the template's cron trigger, now and then
            stamp, line = _said(follower.stdout.readline())
        assert line.startswith("tick late ("), line
        assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
    finally:
        follower.terminate()
        follower.wait(timeout=30)
        if follower.stdout is not None:
            follower.stdout.close()


def test_describe_shows_spec_status_versions_triggers_and_the_last_hour(
    user: User, tmp_path: Path
) -> None:
    user.sless("new", "described", "--template", "cron", cwd=tmp_path)
    user.sless("deploy", cwd=tmp_path / "described")
    for _ in range(2):
        user.sless("invoke", "described", "--data", '{"job": "d"}', cwd=tmp_path)
    while True:  # the invocation records are written a moment after the calls
        shown = user.sless("describe", "described", cwd=tmp_path).stdout
        if "Last hour:   2 invocations, 0 5xx, p50 " in shown:
            break
    lines = shown.splitlines()
    assert "Phase:       Ready" in lines
    assert "Serving:     v1" in lines
    assert "Validation:  allow" in lines
    assert any(line.split()[:3] == ["v1*", "100%", "allowed"] for line in lines), shown
    assert any(
        line.split() == ["described-tick", "cron", "*/5", "*", "*", "*", "*"] for line in lines
    ), shown
    data = json.loads(user.sless("describe", "described", "--json", cwd=tmp_path).stdout)
    assert data["last_hour"]["invocations"] == 2
    assert data["function"]["spec"]["timeout_s"] == 10
