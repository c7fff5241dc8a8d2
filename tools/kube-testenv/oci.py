"""OCI images for the test node without a Docker engine: pack layers, write a complete image
config (os, architecture, Env, Cmd: an image without them is filtered out by containerd),
push to a registry over the distribution API (plain HTTP: the registry lives inside the
node's network namespace). Standard library only: it runs with the machine's python3.

    oci.py push-binary --binary PATH --entrypoint /pause --ref HOST:PORT/REPO:TAG
    oci.py push-layers --layer ROOTFS.tar [--layer MORE.tar ...] --config CONFIG.json --ref REF
    oci.py layer --out LAYER.tar [--file SRC:DEST:MODE ...] [--dir DEST ...] [--tree SRC:DEST ...]
    oci.py layout --layer L.tar ... --config CONFIG.json --out DIR   an OCI layout; its digest
    oci.py digest --ref REF            print the manifest digest of a pushed tag
    oci.py compress LAYER.tar ...       gzip layers now (the build does, for the root filesystems)

Layers are gzip-compressed once and cached next to their tar (``.tar.gz`` + ``.meta``), so
pushing again after the registry restarted is quick. Both are written under temporary names
and renamed into place: checkouts that share the build cache may push at once. The printed line is
``REF@sha256:...``: the digest the Deployment pins.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.client
import io
import json
import os
import sys
import tarfile
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def parse_ref(ref: str) -> tuple[str, str, str]:
    host, _, rest = ref.partition("/")
    repo, _, tag = rest.rpartition(":")
    if not repo or "/" in tag:
        repo, tag = rest, "latest"
    return host, repo, tag


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def compressed(tar_path: Path) -> tuple[Path, str, str]:
    """(gzip path, its digest, diff id) for an uncompressed layer tar; cached beside it."""
    gz = tar_path.with_name(tar_path.name + ".gz")
    meta = tar_path.with_name(tar_path.name + ".meta")
    stat = tar_path.stat()
    key = f"v2:{stat.st_size}:{stat.st_mtime_ns}"  # v2: no file name in the gzip header
    if gz.exists() and meta.exists():
        cached = json.loads(meta.read_text())
        if cached.get("key") == key:
            return gz, cached["digest"], cached["diff_id"]
    diff = hashlib.sha256()
    tmp = gz.with_name(f"{gz.name}.tmp.{os.getpid()}")
    # mtime=0 and no file name (else the temporary name's pid): the same tar always
    # gives the same blob
    with (
        tar_path.open("rb") as src,
        tmp.open("wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=6, mtime=0) as out,
    ):
        while chunk := src.read(1 << 20):
            diff.update(chunk)
            out.write(chunk)
    tmp.replace(gz)
    digest = _sha256_file(gz)
    meta_tmp = meta.with_name(f"{meta.name}.tmp.{os.getpid()}")
    meta_tmp.write_text(
        json.dumps({"key": key, "digest": digest, "diff_id": "sha256:" + diff.hexdigest()})
    )
    meta_tmp.replace(meta)
    return gz, digest, "sha256:" + diff.hexdigest()


class Registry:
    def __init__(self, host: str) -> None:
        self.host = host

    def _conn(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, timeout=120)

    def _request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = self._conn()
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def has_blob(self, repo: str, digest: str) -> bool:
        status, _, _ = self._request("HEAD", f"/v2/{repo}/blobs/{digest}")
        return status == 200

    def push_blob(
        self, repo: str, digest: str, path: Path | None = None, data: bytes | None = None
    ) -> None:
        if self.has_blob(repo, digest):
            return
        status, headers, body = self._request("POST", f"/v2/{repo}/blobs/uploads/")
        if status != 202:
            raise RuntimeError(f"upload start for {repo}: HTTP {status} {body[:200]!r}")
        location = headers["location"]
        parts = urlsplit(location)
        target = (parts.path or location) + ("?" + parts.query if parts.query else "")
        target += ("&" if "?" in target else "?") + f"digest={digest}"
        conn = self._conn()
        try:
            if path is not None:
                size = path.stat().st_size
                conn.putrequest("PUT", target)
                conn.putheader("Content-Type", "application/octet-stream")
                conn.putheader("Content-Length", str(size))
                conn.endheaders()
                with path.open("rb") as f:
                    conn.send(f)
            else:
                assert data is not None
                conn.request(
                    "PUT", target, body=data, headers={"Content-Type": "application/octet-stream"}
                )
            resp = conn.getresponse()
            reply = resp.read()
            if resp.status != 201:
                raise RuntimeError(f"blob upload {digest}: HTTP {resp.status} {reply[:200]!r}")
        finally:
            conn.close()

    def put_manifest(self, repo: str, tag: str, manifest: bytes) -> str:
        status, _, body = self._request(
            "PUT", f"/v2/{repo}/manifests/{tag}", manifest, {"Content-Type": MANIFEST}
        )
        if status != 201:
            raise RuntimeError(f"manifest {repo}:{tag}: HTTP {status} {body[:200]!r}")
        return "sha256:" + hashlib.sha256(manifest).hexdigest()

    def manifest_digest(self, repo: str, tag: str) -> str:
        status, headers, body = self._request(
            "GET", f"/v2/{repo}/manifests/{tag}", headers={"Accept": MANIFEST}
        )
        if status != 200:
            raise RuntimeError(f"manifest {repo}:{tag}: HTTP {status}")
        return headers.get("docker-content-digest") or "sha256:" + hashlib.sha256(body).hexdigest()


def image_blobs(layers: list[Path], config: dict) -> tuple[list[Path], bytes, bytes]:
    """(compressed layers, config, manifest) of an image: fixed times, sorted keys, so the
    same layers and config always give the same manifest digest."""
    gzs, descriptors, diff_ids = [], [], []
    for tar_path in layers:
        gz, digest, diff_id = compressed(tar_path)
        gzs.append(gz)
        descriptors.append({"mediaType": LAYER, "digest": digest, "size": gz.stat().st_size})
        diff_ids.append(diff_id)
    image_config = {
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "tools/kube-testenv/oci.py"}]
        * len(layers),
    }
    config_bytes = json.dumps(image_config, sort_keys=True, separators=(",", ":")).encode()
    config_digest = "sha256:" + hashlib.sha256(config_bytes).hexdigest()
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {"mediaType": CONFIG, "digest": config_digest, "size": len(config_bytes)},
        "layers": descriptors,
    }
    manifest_bytes = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    return gzs, config_bytes, manifest_bytes


def push_image(ref: str, layers: list[Path], config: dict) -> str:
    host, repo, tag = parse_ref(ref)
    registry = Registry(host)
    gzs, config_bytes, manifest_bytes = image_blobs(layers, config)
    for gz in gzs:
        registry.push_blob(repo, _sha256_file(gz), path=gz)
    config_digest = "sha256:" + hashlib.sha256(config_bytes).hexdigest()
    registry.push_blob(repo, config_digest, data=config_bytes)
    return f"{host}/{repo}:{tag}@{registry.put_manifest(repo, tag, manifest_bytes)}"


def write_layout(out: Path, layers: list[Path], config: dict, ref_name: str) -> str:
    """An OCI image layout (oci-layout, index.json, blobs/sha256/) at ``out``; the
    manifest's digest. crane pushes it (``crane push OUT REF``), syft reads it."""
    gzs, config_bytes, manifest_bytes = image_blobs(layers, config)
    blobs = out / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    for gz in gzs:
        target = blobs / _sha256_file(gz).removeprefix("sha256:")
        if not target.exists():
            tmp = target.with_name(target.name + ".tmp")
            tmp.write_bytes(gz.read_bytes())
            tmp.replace(target)
    for data in (config_bytes, manifest_bytes):
        (blobs / hashlib.sha256(data).hexdigest()).write_bytes(data)
    digest = "sha256:" + hashlib.sha256(manifest_bytes).hexdigest()
    (out / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": MANIFEST,
                "digest": digest,
                "size": len(manifest_bytes),
                "annotations": {"org.opencontainers.image.ref.name": ref_name},
            }
        ],
    }
    (out / "index.json").write_text(json.dumps(index, sort_keys=True, separators=(",", ":")))
    return digest


def binary_layer(binary: Path, name: str, workdir: Path) -> Path:
    out = workdir / f"{name.strip('/').replace('/', '_')}.tar"
    data = binary.read_bytes()
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name.lstrip("/"))
        info.size, info.mode, info.mtime = len(data), 0o755, 0
        tar.addfile(info, io.BytesIO(data))
    return out


def files_layer(out: Path, files: list[str], dirs: list[str], trees: tuple[str, ...] = ()) -> None:
    """A layer of root-owned files and directories, with fixed times (the same input always
    gives the same layer). Parent directories are added as 0755. A tree ``SRC:DEST`` adds
    every file under SRC (0755 if executable, else 0644; symlinks are refused)."""
    entries: dict[str, tuple[str, Path | None, int]] = {}
    files = list(files)
    for spec in trees:
        src_root, dest_root = spec.split(":")
        for path in sorted(Path(src_root).rglob("*")):
            if path.is_symlink():
                raise SystemExit(f"{path}: symlinks are not packed")
            if path.is_file():
                mode = "0755" if os.access(path, os.X_OK) else "0644"
                rel = path.relative_to(src_root).as_posix()
                files.append(f"{path}:{dest_root.rstrip('/')}/{rel}:{mode}")

    def add_parents(dest: str) -> None:
        parts = dest.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            entries.setdefault("/".join(parts[:i]), ("dir", None, 0o755))

    for spec in dirs:
        add_parents(spec)
        entries[spec.strip("/")] = ("dir", None, 0o755)
    for spec in files:
        src, dest, mode = spec.split(":")
        add_parents(dest)
        entries[dest.strip("/")] = ("file", Path(src), int(mode, 8))
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(entries):
            kind, src, mode = entries[name]
            info = tarfile.TarInfo(name)
            info.mode, info.mtime, info.uid, info.gid = mode, 0, 0, 0
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                assert src is not None
                data = src.read_bytes()
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="oci.py")
    sub = parser.add_subparsers(dest="cmd", required=True)
    pb = sub.add_parser("push-binary")
    pb.add_argument("--binary", type=Path, required=True)
    pb.add_argument("--entrypoint", required=True)
    pb.add_argument("--ref", required=True)
    pl = sub.add_parser("push-layers")
    pl.add_argument("--layer", type=Path, action="append", required=True)
    pl.add_argument("--config", type=Path, required=True, help="the image config's `config` object")
    pl.add_argument("--ref", required=True)
    ly = sub.add_parser("layer")
    ly.add_argument("--out", type=Path, required=True)
    ly.add_argument("--file", action="append", default=[])
    ly.add_argument("--dir", action="append", default=[])
    ly.add_argument("--tree", action="append", default=[])
    lo = sub.add_parser("layout")
    lo.add_argument("--layer", type=Path, action="append", required=True)
    lo.add_argument("--config", type=Path, required=True, help="the image config's `config` object")
    lo.add_argument("--out", type=Path, required=True)
    lo.add_argument("--name", default="latest", help="the layout's ref name (a tag)")
    dg = sub.add_parser("digest")
    dg.add_argument("--ref", required=True)
    cp = sub.add_parser("compress")
    cp.add_argument("layers", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.cmd == "push-binary":
        with tempfile.TemporaryDirectory() as tmp:
            layer = binary_layer(args.binary, args.entrypoint, Path(tmp))
            print(
                push_image(
                    args.ref, [layer], {"Entrypoint": [args.entrypoint], "User": "65535:65535"}
                )
            )
    elif args.cmd == "layer":
        files_layer(args.out, args.file, args.dir, tuple(args.tree))
    elif args.cmd == "compress":
        for layer in args.layers:
            compressed(layer)
    elif args.cmd == "layout":
        print(write_layout(args.out, args.layer, json.loads(args.config.read_text()), args.name))
    elif args.cmd == "push-layers":
        print(push_image(args.ref, args.layer, json.loads(args.config.read_text())))
    else:
        host, repo, tag = parse_ref(args.ref)
        print(f"{host}/{repo}:{tag}@{Registry(host).manifest_digest(repo, tag)}")
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main(sys.argv[1:]))
