"""Attack: the build's installer is host root. uv and npm parse what the tenant wrote and
fetch what it names; a bug in either (or a package that abuses one) then acts with all of
root's power over the host: it reads /etc/shadow, /root and other tenants' files, plants a
setuid binary in the build that the sandbox then maps in, poisons the cache every tenant's
build shares, or leaves a process behind.

The installer here is a stand-in for a compromised uv: a script in its place
(``SLESS_BUILD_UV``) that tries each of those, records what worked in the build, and starts
a process that would outlive it. Everything else is real (the builder, setpriv, the pid
namespace, the file system). With the build as the tenant's own unprivileged uid in a pid
namespace, sealed root's afterwards, none of it works; a real install (uv, from a local
wheelhouse) still does.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sless.backends.local.building import Build, Builder, BuildError
from sless.config import Settings
from sless.models import Runtime
from sless.sandbox import HostIds
from sless.store import LocalBlobStore
from tests.support import make_zip

pytestmark = pytest.mark.integration

if os.geteuid() != 0:
    pytest.skip("the installer switches uid only when the gateway is root", allow_module_level=True)

TENANT_A = HostIds(uid=100_000_301, gid=100_000_301)
TENANT_B = HostIds(uid=100_000_302, gid=100_000_302)

STAND_IN = """#!/bin/sh
# a compromised installer: who is it, what can it reach, what can it leave behind
prev=""
for arg in "$@"; do
  if [ "$prev" = "--target" ]; then out="$arg"; fi
  prev="$arg"
done
id -u > "$out/uid"
id -g > "$out/gid"
echo "$UV_CACHE_DIR" > "$out/cache"
mkdir -p "$UV_CACHE_DIR"
echo "cache of $(id -u)" > "$UV_CACHE_DIR/planted" 2>/dev/null
head -c 64 /etc/shadow > "$out/shadow" 2>/dev/null || rm -f "$out/shadow"
ls /root > "$out/root-listing" 2>/dev/null || rm -f "$out/root-listing"
if [ "$(id -u)" != "{other_uid}" ]; then
  cat {other_cache}/planted > "$out/other-cache" 2>/dev/null || rm -f "$out/other-cache"
  echo planted > {other_cache}/poisoned 2>/dev/null
fi
cp /bin/sh "$out/suid-shell" && chmod 6755 "$out/suid-shell"
mkdir "$out/shared-dir" && chmod 3777 "$out/shared-dir"
echo hi > "$out/world-writable" && chmod 666 "$out/world-writable"
ln -s /etc/shadow "$out/link-to-shadow"
setsid sleep 300 < /dev/null > /dev/null 2>&1 &
exit 0
"""


@pytest.fixture
def run_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sless-run-", dir="/tmp"))
    path.chmod(0o711)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def builder(tmp_path: Path, settings: Settings, run_dir: Path) -> Builder:
    built = Builder(
        tmp_path / "builds", LocalBlobStore(tmp_path / "blobs"), settings.build, settings.validation
    )
    built.start(run_dir)
    return built


def stand_in(builder: Builder, run_dir: Path) -> None:
    """Put the compromised installer in uv's place (reachable and executable by any uid)."""
    assert builder.work is not None
    tools = Path(tempfile.mkdtemp(prefix="tools-", dir=run_dir))
    tools.chmod(0o755)
    script = tools / "uv"
    other_cache = builder.work / f"t{TENANT_B.uid}" / "cache" / "uv"
    script.write_text(STAND_IN.format(other_cache=other_cache, other_uid=TENANT_B.uid))
    script.chmod(0o755)
    builder.settings.uv = str(script)


async def build(builder: Builder, files: dict[str, str], ids: HostIds) -> Build:
    data = make_zip({"handler.py": "def handle(event, context):\n    return 1\n", **files})
    sha256 = hashlib.sha256(data).hexdigest()
    await builder.blobs.put(sha256, data)
    return await builder.ensure_built(Runtime.PYTHON311, sha256, ids)


def processes_of(uid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
        except OSError:
            continue
        uids = next((line.split()[1:] for line in lines if line.startswith("Uid:")), [])
        if str(uid) in uids:
            found.append(int(status.parent.name))
    return found


async def test_installer_runs_as_the_tenant_and_its_output_is_sealed(
    builder: Builder, run_dir: Path
) -> None:
    stand_in(builder, run_dir)
    # tenant B builds first: its cache holds something of its own
    await build(builder, {"requirements.txt": "six\n"}, TENANT_B)
    built = await build(builder, {"requirements.txt": "six==1.16.0\n"}, TENANT_A)
    deps = built.deps_dir
    assert (deps / "uid").read_text().strip() == str(TENANT_A.uid)
    assert (deps / "gid").read_text().strip() == str(TENANT_A.gid)
    # host files, /root and the other tenant's cache were out of reach
    assert not (deps / "shadow").exists()
    assert not (deps / "root-listing").exists()
    assert not (deps / "other-cache").exists()
    assert builder.work is not None
    b_cache = builder.work / f"t{TENANT_B.uid}" / "cache"
    assert not (b_cache / "uv" / "poisoned").exists()
    # each tenant's cache is its own, and no other uid enters it
    a_cache = Path((deps / "cache").read_text().strip()).parent
    assert a_cache != b_cache
    for cache, ids in ((a_cache, TENANT_A), (b_cache, TENANT_B)):
        info = cache.stat()
        assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (ids.uid, 0o700)
    # nothing it started outlived it
    assert processes_of(TENANT_A.uid) == []
    # the build is root's, read-only to everyone else, no setuid, setgid or sticky bit
    for path in [built.root, *built.root.rglob("*")]:
        info = path.lstat()
        assert (info.st_uid, info.st_gid) == (0, 0), path
        if not stat.S_ISLNK(info.st_mode):
            assert stat.S_IMODE(info.st_mode) & 0o7022 == 0, (path, oct(info.st_mode))


async def test_a_hard_link_to_a_host_file_fails_the_build(
    builder: Builder, run_dir: Path, tmp_path: Path
) -> None:
    """The uid may hard-link a file it owns elsewhere (protected_hardlinks allows that):
    sealing must never chown or chmod an inode outside the build."""
    stand_in(builder, run_dir)
    assert builder.work is not None
    outside = builder.work / f"t{TENANT_A.uid}" / "cache" / "outside"
    script = Path(builder.settings.uv)
    script.write_text(
        script.read_text().replace(
            "exit 0", f'echo mine > {outside} && ln {outside} "$out/linked" ; exit 0'
        )
    )
    with pytest.raises(BuildError, match="not a plain file"):
        await build(builder, {"requirements.txt": "six\n"}, TENANT_A)
    assert outside.stat().st_uid == TENANT_A.uid
    assert processes_of(TENANT_A.uid) == []


@pytest.fixture
def wheelhouse(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The examples' wheels (scripts/test fetches them), copied where any uid reads them."""
    source = os.environ.get("SLESS_TEST_WHEELHOUSE") or next(
        iter(sorted((Path.home() / ".cache" / "sless" / "test-wheels").glob("*"))), None
    )
    if source is None or not any(Path(source).glob("yarl-*.whl")):
        pytest.skip("no wheelhouse with yarl: run scripts/test once")
    target = run_dir / "wheels"
    shutil.copytree(source, target)
    for path in [target, *target.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    monkeypatch.setenv("UV_FIND_LINKS", str(target))
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.delenv("UV_INDEX_URL", raising=False)
    return target


async def test_a_real_install_works_as_the_tenant(builder: Builder, wheelhouse: Path) -> None:
    built = await build(builder, {"requirements.txt": "yarl==1.22.0\n"}, TENANT_A)
    assert (built.deps_dir / "yarl" / "__init__.py").is_file()
    for path in [built.root, *built.root.rglob("*")]:
        info = path.lstat()
        assert info.st_uid == 0, path
        assert stat.S_IMODE(info.st_mode) & 0o7022 == 0, path
