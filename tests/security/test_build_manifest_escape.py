"""Attack: a tenant's dependency manifest makes the build read host files or reach the
network. The installers (uv, npm) run on the host during an embedded-mode build; a
requirements.txt or package.json is a small program for them: ``-r /etc/shadow`` reads a
host file (and the error quotes its lines), ``pkg @ http://127.0.0.1:PORT/...``,
``--index-url``, a ``file:`` or ``git+`` dependency, or a lockfile ``resolved`` URL fetch
from wherever the tenant says. The build itself must refuse all of these (defence in
depth: the upload refuses them too, tests/security/test_build_manifest_upload.py), before
any installer runs, with a reason naming the line and never a host file's contents.

Real uv and npm; the "registry" the platform is configured with and the tenant's target
are loopback listeners this test starts, and the target must receive no request at all.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import http.server
import io
import json
import os
import shutil
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sless.backends.local.building import Builder, BuildError
from sless.config import Settings
from sless.models import Runtime
from sless.sandbox import HostIds
from sless.store import LocalBlobStore
from tests.support import make_zip

pytestmark = pytest.mark.integration

#: what a host file holds that a tenant must never see (a root-only file of this test)
MARKER = "root:$6$SLESS-HOST-SECRET-7f3a:19000:0:99999:7:::"
TENANT = HostIds(uid=100_000_201, gid=100_000_201)


@dataclass
class Listener:
    """A loopback HTTP server that records every request and answers 404."""

    port: int
    requests: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def listener() -> Iterator[Listener]:
    with _listening() as got:
        yield got


@pytest.fixture
def registry() -> Iterator[Listener]:
    """The index/registry the platform is configured with (answers nothing useful)."""
    with _listening() as got:
        yield got


class _listening:
    def __enter__(self) -> Listener:
        record: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                record.append(f"{self.command} {self.path}")
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_HEAD = do_POST = _any

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return Listener(self.server.server_address[1], record)

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "host-secret"
    path.write_text(MARKER + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def run_dir() -> Iterator[Path]:
    """The gateway's run dir: under /tmp, searchable by the tenants' uids (0711)."""
    path = Path(tempfile.mkdtemp(prefix="sless-run-", dir="/tmp"))
    path.chmod(0o711)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def builder(
    tmp_path: Path,
    settings: Settings,
    registry: Listener,
    run_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Builder:
    # the platform's own index and registry: loopback, so that nothing leaves the machine
    monkeypatch.setenv("UV_INDEX_URL", f"{registry.url}/simple")
    monkeypatch.delenv("UV_OFFLINE", raising=False)
    monkeypatch.delenv("UV_FIND_LINKS", raising=False)
    settings.validation.npm_registry = f"{registry.url}/"
    settings.build.timeout_s = 60
    blobs = LocalBlobStore(tmp_path / "blobs")
    built = Builder(tmp_path / "builds", blobs, settings.build, settings.validation)
    built.start(run_dir)
    return built


async def build(builder: Builder, runtime: Runtime, files: dict[str, str]) -> str:
    """The build's error message (the test fails if the build succeeds)."""
    data = make_zip(files)
    sha256 = hashlib.sha256(data).hexdigest()
    await builder.blobs.put(sha256, data)
    with pytest.raises(BuildError) as raised:
        await builder.ensure_built(runtime, sha256, TENANT)
    return str(raised.value)


PY_HANDLER = {"handler.py": "def handle(event, context):\n    return 1\n"}
NODE_HANDLER = {"handler.js": "exports.handle = async () => 1;\n"}

#: requirements.txt lines that read a host file or reach a host of the tenant's choosing
PYTHON_ATTACKS = {
    "include-host-file": "-r {secret}\n",
    "include-host-file-long": "--requirement={secret}\n",
    "constraint-host-file": "six\n-c {secret}\n",
    "index-url": "--index-url {url}/simple\nsix\n",
    "short-index-url": "-i {url}/simple\nsix\n",
    "extra-index-url": "--extra-index-url {url}/simple\nsix\n",
    "find-links": "--find-links {url}/wheels/\nsix\n",
    "editable": "-e file://{dir}\n",
    "direct-file-url": "leak @ file://{secret}\n",
    "direct-http-url": "leak @ {url}/leak-1.0-py3-none-any.whl\n",
    "bare-url": "{url}/leak-1.0-py3-none-any.whl\n",
    "vcs-url": "leak @ git+{url}/leak.git\n",
    "per-requirement-option": "six --index-url {url}/simple\n",
    "env-expansion": "leak @ ${{UV_INDEX_URL}}/../leak-1.0-py3-none-any.whl\n",
    "continued-option": "--index-\\\nurl {url}/simple\nsix\n",
    "local-archive": "leak-1.0-py3-none-any.whl\n",
}


@pytest.mark.parametrize("attack", sorted(PYTHON_ATTACKS))
async def test_requirements_cannot_read_host_files_or_reach_hosts(
    attack: str, builder: Builder, listener: Listener, secret_file: Path, tmp_path: Path
) -> None:
    line = PYTHON_ATTACKS[attack].format(secret=secret_file, url=listener.url, dir=tmp_path)
    message = await build(builder, Runtime.PYTHON311, {**PY_HANDLER, "requirements.txt": line})
    assert "requirements.txt line " in message, message
    assert "SLESS-HOST-SECRET" not in message
    await asyncio.sleep(0)  # the listener thread has answered whatever reached it
    assert listener.requests == []


#: package.json dependencies that bypass the registry
NODE_ATTACKS = {
    "file": "file:{dir}",
    "link": "link:{dir}",
    "absolute-path": "{dir}",
    "relative-path": "../../../{dir}",
    "home-path": "~/leak",
    "tarball-name": "leak.tgz",
    "git-http": "git+{url}/leak.git",
    "http-tarball": "{url}/leak.tgz",
    "https-tarball": "https://127.0.0.1:{port}/leak.tgz",
    "github-shorthand": "leak-user/leak-repo",
    "github-prefix": "github:leak-user/leak-repo",
    "alias-to-url": "npm:leak@{url}/leak.tgz",
}


@pytest.mark.parametrize("attack", sorted(NODE_ATTACKS))
async def test_package_json_cannot_bypass_the_registry(
    attack: str, builder: Builder, listener: Listener, tmp_path: Path
) -> None:
    spec = NODE_ATTACKS[attack].format(dir=tmp_path, url=listener.url, port=listener.port)
    manifest = {"name": "fn", "version": "1.0.0", "dependencies": {"leak": spec}}
    files = {**NODE_HANDLER, "package.json": json.dumps(manifest, indent=2)}
    message = await build(builder, Runtime.NODEJS20, files)
    assert "package.json dependencies.leak" in message, message
    assert listener.requests == []


async def test_package_json_workspaces_and_overrides_are_refused(
    builder: Builder, listener: Listener
) -> None:
    manifest = {
        "name": "fn",
        "version": "1.0.0",
        "dependencies": {"left-pad": "^1.3.0"},
        "overrides": {"left-pad": f"{listener.url}/leak.tgz"},
        "workspaces": ["../../"],
    }
    files = {**NODE_HANDLER, "package.json": json.dumps(manifest, indent=2)}
    message = await build(builder, Runtime.NODEJS20, files)
    assert "overrides.left-pad" in message, message
    assert "package.json workspaces" in message, message
    assert listener.requests == []


def lockfile(resolved: str, **extra: object) -> str:
    return json.dumps(
        {
            "name": "fn",
            "version": "1.0.0",
            "lockfileVersion": 3,
            "requires": True,
            "packages": {
                "": {"name": "fn", "version": "1.0.0", "dependencies": {"left-pad": "^1.3.0"}},
                "node_modules/left-pad": {
                    "version": "1.3.0",
                    "resolved": resolved,
                    "integrity": "sha512-" + "A" * 86 + "==",
                    **extra,
                },
            },
        },
        indent=2,
    )


@pytest.mark.parametrize("where", ["loopback", "file", "git", "link"])
async def test_lockfile_resolved_only_on_the_configured_registry(
    where: str, builder: Builder, listener: Listener, tmp_path: Path
) -> None:
    resolved = {
        "loopback": f"{listener.url}/left-pad/-/left-pad-1.3.0.tgz",
        "file": f"file:{tmp_path}",
        "git": f"git+{listener.url}/left-pad.git#abc",
        "link": "../../",
    }[where]
    extra = {"link": True} if where == "link" else {}
    manifest = {"name": "fn", "version": "1.0.0", "dependencies": {"left-pad": "^1.3.0"}}
    files = {
        **NODE_HANDLER,
        "package.json": json.dumps(manifest),
        "package-lock.json": lockfile(resolved, **extra),
    }
    message = await build(builder, Runtime.NODEJS20, files)
    assert "package-lock.json" in message, message
    assert "node_modules/left-pad" in message, message
    assert listener.requests == []


@pytest.mark.parametrize(
    ("name", "content"),
    [
        (".npmrc", "registry={url}/\n"),
        ("pip.conf", "[global]\nindex-url = {url}/simple\n"),
        ("uv.toml", 'index-url = "{url}/simple"\n'),
    ],
)
async def test_installer_config_in_the_upload_is_refused(
    name: str, content: str, builder: Builder, listener: Listener
) -> None:
    runtime = Runtime.NODEJS20 if name == ".npmrc" else Runtime.PYTHON311
    if runtime is Runtime.NODEJS20:
        files = {**NODE_HANDLER, "package.json": json.dumps({"dependencies": {"x": "^1"}})}
    else:
        files = {**PY_HANDLER, "requirements.txt": "six\n"}
    message = await build(builder, runtime, {**files, name: content.format(url=listener.url)})
    assert name in message, message
    assert listener.requests == []


async def test_build_error_never_quotes_a_host_file(builder: Builder, secret_file: Path) -> None:
    """The installer's own output is shown to the tenant on failure: a manifest that makes
    it parse a host file must not get that file's lines back (here /etc/shadow, and a
    root-only file whose contents we know)."""
    for target in ("/etc/shadow", str(secret_file)):
        message = await build(
            builder, Runtime.PYTHON311, {**PY_HANDLER, "requirements.txt": f"-r {target}\n"}
        )
        assert "SLESS-HOST-SECRET" not in message
        assert "$6$" not in message
        assert ":::" not in message
        assert "requirements.txt" in message, message


@pytest.mark.parametrize(
    "files",
    [
        {"requirements.txt": "-r /etc/shadow\n"},
        {"requirements.txt": "leak @ http://127.0.0.1:9/leak-1.0-py3-none-any.whl\n"},
        {"package.json": json.dumps({"dependencies": {"leak": "/etc/leak"}})},
        {
            "package.json": json.dumps({"dependencies": {"left-pad": "^1.3.0"}}),
            "package-lock.json": lockfile("http://127.0.0.1:9/left-pad-1.3.0.tgz"),
        },
        {"uv.toml": 'index-url = "http://127.0.0.1:9/simple"\n'},
    ],
    ids=["include", "url", "npm-path", "lockfile", "uv-toml"],
)
def test_kubernetes_build_context_refuses_the_same_manifests(files: dict[str, str]) -> None:
    """Kubernetes mode: the operator makes kaniko's context from the zip; it checks the
    same policy there, so a manifest that slipped past the upload never reaches a build."""
    from sless.config import ArchiveLimits
    from sless.operator.contexts import ContextError, repack

    data = make_zip({**PY_HANDLER, **files})
    with pytest.raises(ContextError, match="dependency manifests") as raised:
        repack(data, "FROM scratch\n", ArchiveLimits(), "https://registry.npmjs.org/")
    assert list(files)[-1] in str(raised.value)
    # the same code with plain manifests still packs
    plain = {"requirements.txt": "six==1.16.0\n"}
    assert repack(make_zip({**PY_HANDLER, **plain}), "FROM scratch\n", ArchiveLimits())


def _tarball(files: dict[str, str]) -> bytes:
    """An npm package tarball (``package/`` prefix), gzip'd."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class _npm_registry:
    """A registry that serves one published package, ``innocent@1.0.0``, whose own
    dependency is a URL of its publisher's choice (``evil``): the tenant's manifest is
    clean (a registry package), the attack is one level down, in published metadata."""

    def __init__(self, evil: str | None) -> None:
        manifest: dict[str, object] = {"name": "innocent", "version": "1.0.0"}
        if evil is not None:
            manifest["dependencies"] = {"evil": evil}
        self.tarball = _tarball({"package.json": json.dumps(manifest), "index.js": ""})
        self.manifest = manifest

    def __enter__(self) -> Listener:
        record: list[str] = []
        tarball = self.tarball
        manifest = self.manifest

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                record.append(f"GET {self.path}")
                host = self.headers.get("Host", "")
                if self.path.rstrip("/") == "/innocent":
                    integrity = base64.b64encode(hashlib.sha512(tarball).digest()).decode()
                    version = {
                        **manifest,
                        "dist": {
                            "tarball": f"http://{host}/innocent/-/innocent-1.0.0.tgz",
                            "shasum": hashlib.sha1(tarball).hexdigest(),
                            "integrity": f"sha512-{integrity}",
                        },
                    }
                    doc = {
                        "name": "innocent",
                        "dist-tags": {"latest": "1.0.0"},
                        "versions": {"1.0.0": version},
                    }
                    self._send(json.dumps(doc).encode(), "application/json")
                elif self.path == "/innocent/-/innocent-1.0.0.tgz":
                    self._send(tarball, "application/octet-stream")
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return Listener(self.server.server_address[1], record)

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.skipif(os.geteuid() != 0, reason="the installer's own network needs root")
@pytest.mark.parametrize("kind", ["http-tarball", "git-http"])
async def test_a_published_packages_url_dependency_reaches_nothing(
    kind: str, builder: Builder, listener: Listener
) -> None:
    """A registry package may itself depend on a URL (npm accepts that in published
    metadata): the installer must still reach nothing but the configured registry."""
    evil = {"http-tarball": f"{listener.url}/evil.tgz", "git-http": f"git+{listener.url}/e.git"}
    with _npm_registry(evil[kind]) as registry:
        builder.archive_settings.npm_registry = f"{registry.url}/"
        manifest = {"name": "fn", "version": "1.0.0", "dependencies": {"innocent": "1.0.0"}}
        files = {**NODE_HANDLER, "package.json": json.dumps(manifest)}
        message = await build(builder, Runtime.NODEJS20, files)
    # the registry was reached (the clean part of the install works through the proxy)
    assert "GET /innocent" in registry.requests, registry.requests
    assert listener.requests == [], listener.requests
    assert "installing package.json dependencies failed" in message, message


@pytest.mark.skipif(os.geteuid() != 0, reason="the installer's own network needs root")
async def test_a_registry_package_still_installs_through_the_build_proxy(
    builder: Builder,
) -> None:
    """The other side of the confinement: the configured registry is reached."""
    with _npm_registry(None) as registry:
        builder.archive_settings.npm_registry = f"{registry.url}/"
        manifest = {"name": "fn", "version": "1.0.0", "dependencies": {"innocent": "1.0.0"}}
        data = make_zip({**NODE_HANDLER, "package.json": json.dumps(manifest)})
        sha256 = hashlib.sha256(data).hexdigest()
        await builder.blobs.put(sha256, data)
        built = await builder.ensure_built(Runtime.NODEJS20, sha256, TENANT)
    assert (built.deps_dir / "node_modules" / "innocent" / "package.json").is_file()
    assert "GET /innocent/-/innocent-1.0.0.tgz" in registry.requests, registry.requests
