"""Attack: escape the sandbox from a function written for a peer (Lambda, OpenFaaS, Knative,
ASGI, WSGI). The adapters run inside the runtime server, in the handler's own process: a
handler reached through any of them must be exactly as confined as a ``sless`` one. From
each interface, in Python and Node, the handler tries what the sandbox suite tries through
the ``sless`` contract: write a host-wide kernel setting, read the host's password hashes,
see the platform's files, and the worker's host uid is the tenant's own, never root."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.security.test_sandbox_tenant_uids import host_uid, worker_of
from tests.support import deploy

pytestmark = pytest.mark.integration

if os.geteuid() != 0:
    pytest.skip("the gateway switches uid only as root", allow_module_level=True)

PROBE_PY = """
import json, os

def probe():
    out = {}
    try:
        with open("/proc/sys/fs/file-max", "r+") as f:
            f.write(f.read())
        out["proc_sys"] = "written"
    except OSError as e:
        out["proc_sys"] = e.errno
    try:
        with open("/etc/shadow") as f:
            out["shadow"] = "read:" + f.read(20)
    except OSError as e:
        out["shadow"] = e.errno
    out["data_dir"] = os.path.exists(DATA_DIR)
    return out
"""

PROBE_JS = """
const fs = require("fs");
function attempt(fn) { try { return fn(); } catch (e) { return e.code; } }
function probe() {
  return {
    proc_sys: attempt(() => { const v = fs.readFileSync("/proc/sys/fs/file-max");
                               fs.writeFileSync("/proc/sys/fs/file-max", v); return "written"; }),
    shadow: attempt(() => "read:" + fs.readFileSync("/etc/shadow", "utf8").slice(0, 20)),
    data_dir: fs.existsSync(DATA_DIR),
  };
}
"""

#: (runtime, interface) → (files, with ``{probe}`` where the probe's code goes)
FUNCTIONS: dict[tuple[str, str], dict[str, str]] = {
    ("python3.11", "lambda"): {
        "lambda_function.py": "{probe}\ndef lambda_handler(event, context):\n"
        "    return {'statusCode': 200, 'body': json.dumps(probe())}\n"
    },
    ("python3.11", "openfaas"): {
        "handler.py": "{probe}\ndef handle(event, context):\n"
        "    return {'statusCode': 200, 'body': json.dumps(probe())}\n"
    },
    ("python3.11", "knative"): {
        "function/__init__.py": "",
        "function/func.py": "{probe}\nclass F:\n"
        "    async def handle(self, scope, receive, send):\n"
        "        body = json.dumps(probe()).encode()\n"
        "        await send({'type': 'http.response.start', 'status': 200,\n"
        "                    'headers': [(b'content-type', b'application/json')]})\n"
        "        await send({'type': 'http.response.body', 'body': body})\n"
        "def new():\n    return F()\n",
    },
    ("python3.11", "asgi"): {
        "app.py": "{probe}\nasync def app(scope, receive, send):\n"
        "    if scope['type'] != 'http':\n        return\n"
        "    body = json.dumps(probe()).encode()\n"
        "    await send({'type': 'http.response.start', 'status': 200,\n"
        "                'headers': [(b'content-type', b'application/json')]})\n"
        "    await send({'type': 'http.response.body', 'body': body})\n"
    },
    ("python3.11", "wsgi"): {
        "app.py": "{probe}\ndef app(environ, start_response):\n"
        "    start_response('200 OK', [('Content-Type', 'application/json')])\n"
        "    return [json.dumps(probe()).encode()]\n"
    },
    ("nodejs20", "lambda"): {
        "index.js": "{probe}\nexports.handler = async () => "
        "({ statusCode: 200, body: JSON.stringify(probe()) });\n"
    },
    ("nodejs20", "openfaas"): {
        "handler.js": "{probe}\nmodule.exports = async (event, context) => "
        "context.status(200).succeed(probe());\n"
    },
    ("nodejs20", "knative"): {
        "index.js": "{probe}\nconst handle = async (context, body) => probe();\n"
        "module.exports = { handle };\n"
    },
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # validation refuses these uploads (the static rules and the detonation see the attempts:
    # tests/integration/validation/test_detonation.py calls apps through their interface);
    # here the attack must run to be contained
    settings.validation.static_enabled = False
    settings.validation.detonation_enabled = False
    return settings


@pytest.mark.parametrize(("runtime", "interface"), sorted(FUNCTIONS))
def test_a_peer_interface_handler_is_as_confined_as_any(
    gateway: RunningGateway, runtime: str, interface: str, isolation: str
) -> None:
    tenant = gateway.tenant("peer")
    data_dir = str(Path(gateway.settings.data_dir).resolve())
    probe = (PROBE_JS if runtime == "nodejs20" else PROBE_PY).replace(
        "DATA_DIR", json.dumps(data_dir)
    )
    files = {
        name: text.replace("{probe}", probe if text else "")
        for name, text in FUNCTIONS[(runtime, interface)].items()
    }
    name = f"{interface}-{runtime.rstrip('0123456789.')}"
    function = deploy(
        tenant, "sless-peer", name, files, {"runtime": runtime, "interface": interface}
    )
    assert function["status"]["phase"] == "Ready", function["status"]
    answer = httpx.get(f"{gateway.url}/fn/sless-peer/{name}", timeout=60)
    assert answer.status_code == 200, answer.text
    seen: dict[str, Any] = answer.json()
    # EROFS or EACCES (Python: errno 30/13; Node: the code), never written; gVisor's
    # synthetic /proc/sys has no such setting at all (ENOENT)
    refused: tuple[int | str, ...] = (30, 13, "EROFS", "EACCES")
    if isolation == "gvisor":
        refused = (*refused, 2, "ENOENT")
    assert seen["proc_sys"] in refused, seen
    # the host's /etc is not the sandbox's: no shadow file, or one it cannot read
    assert seen["shadow"] in (2, 13, "ENOENT", "EACCES"), seen
    assert seen["data_dir"] is False, seen  # the platform's files are not mounted
    settings = gateway.settings.sandbox
    uid = host_uid(worker_of(gateway, "sless-peer", name).pid)
    assert settings.uid_base <= uid < settings.uid_base + settings.uid_count, uid
