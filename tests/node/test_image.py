"""The platform image as a provider builds it (scripts/image, docs/kubernetes.md): no Docker
engine, the same digest when built again, non-root, an SPDX SBOM that lists what is in it."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ROOT / "scripts" / "image"


def _build(out: Path, *flags: str) -> str:
    proc = subprocess.run(
        [str(IMAGE), "--out", str(out), *flags],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "UV_OFFLINE": "1"},  # the node's netns has no way out
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


def _blob(layout: Path, digest: str) -> Path:
    return layout / "blobs" / "sha256" / digest.removeprefix("sha256:")


def test_the_image_is_reproducible_non_root_and_has_an_sbom(tmp_path: Path) -> None:
    first = _build(tmp_path / "a", "--no-sbom")
    second = _build(tmp_path / "b")
    assert first.startswith("sha256:")
    assert first == second  # rebuilt from the same commit: the same digest

    manifest = json.loads(_blob(tmp_path / "b", second).read_text())
    config = json.loads(_blob(tmp_path / "b", manifest["config"]["digest"]).read_text())
    assert config["config"]["User"] == "65532:65532"
    assert config["config"]["Entrypoint"] == ["sless"]
    # the layers this checkout adds (semgrep, sless): fixed times, root-owned, no setuid
    for layer in manifest["layers"][1:]:
        with (
            gzip.open(_blob(tmp_path / "b", layer["digest"])) as raw,
            tarfile.open(fileobj=raw) as tar,
        ):
            for member in tar:
                assert member.mtime == 0, member.name
                assert (member.uid, member.gid) == (0, 0), member.name
                assert not member.mode & 0o6000, member.name

    sbom = json.loads((tmp_path / "b" / "sbom.spdx.json").read_text())
    assert sbom["spdxVersion"].startswith("SPDX-")
    names = {p["name"] for p in sbom["packages"]}
    assert {"sless", "semgrep", "python3.11"} <= names, sorted(names)[:50]
