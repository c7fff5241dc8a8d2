"""The recording network of a detonation: a network namespace that leads nowhere.

Run as root inside a fresh network and mount namespace (``unshare --net --mount``, see
``detonation``) as ``python -m sless.validation.sink OUT CA_DIR -- COMMAND...``, or with
``--wait`` instead of ``-- COMMAND...`` to read the command as a JSON list from stdin once
the network is ready (made ahead of time, ``recording``); a second line on stdin, if any,
is COMMAND's whole stdin (the harness's nonce). It

- brings up ``lo``, routes every IPv4 address to it, and adds an nftables rule that
  redirects every TCP connection not bound for loopback to the sink's port and every UDP
  datagram to port 53 to the resolver;
- answers every DNS name with an address of its own (``10.x.y.z``, one per name), so a
  connection is traced back to the name it was made for, and records every name asked
  (DNS-name exfiltration included);
- accepts TCP on any port (the original destination comes from ``SO_ORIGINAL_DST``),
  terminates TLS with a certificate for the name asked (signed by a CA made for this
  detonation only, which the sandbox trusts), answers HTTP with an empty 200, greets a
  client that waits for the server to speak (SMTP, FTP) and plays along with its commands
  (``_converse``: log-in, one message), and records up to ``MAX_BYTES`` of what arrives;
- runs COMMAND (the sandbox, already dropping to an unprivileged uid), and writes the
  record as JSON to OUT when it exits.

Nothing leaves the namespace: it has no interface with a way out. The sink parses untrusted
bytes as root, so it parses as little as it can: a DNS question, a TLS handshake done by the
ssl module, and nothing of HTTP but the first bytes.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

SINK_PORT = 9
DNS_PORT = 53
MAX_BYTES = 64 * 1024
_SO_ORIGINAL_DST = 80
_READ_TIMEOUT_S = 0.3
#: a client silent this long after connecting waits for the server to speak first
_SERVER_FIRST_S = 0.15
_NFT_RULES = f"""
table ip sless_sink {{
  chain out {{
    type nat hook output priority -100; policy accept;
    ip daddr != 127.0.0.0/8 meta l4proto tcp redirect to :{SINK_PORT}
    udp dport 53 redirect to :{DNS_PORT}
  }}
}}
"""


class Record:
    """What the network saw; shared by the sink's threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.names: dict[str, str] = {}
        self.by_address: dict[str, str] = {}
        self.connections: list[dict[str, Any]] = []
        self.handlers: list[threading.Thread] = []

    def address_for(self, name: str) -> str:
        with self.lock:
            if name not in self.names:
                n = len(self.names) + 1
                address = f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"
                self.names[name] = address
                self.by_address[address] = name
            return self.names[name]

    def as_json(self) -> dict[str, Any]:
        with self.lock:
            return {"names": list(self.names), "connections": list(self.connections)}


def _setup_network() -> None:
    for argv in (
        ["ip", "link", "set", "lo", "up"],
        # every address routes to loopback, where the nat rule below sends it to the sink;
        # the source address is one of lo's own, outside 127/8, so replies route back
        ["ip", "addr", "add", "10.255.255.254/32", "dev", "lo"],
        ["ip", "route", "add", "default", "dev", "lo", "src", "10.255.255.254"],
    ):
        subprocess.run(argv, check=True, capture_output=True)
    subprocess.run(["nft", "-f", "-"], input=_NFT_RULES.encode(), check=True, capture_output=True)


def _dns_answer(query: bytes, record: Record) -> bytes | None:
    if len(query) < 12:
        return None
    labels, i = [], 12
    while i < len(query) and query[i] != 0:
        length = query[i]
        if length > 63 or i + 1 + length > len(query):
            return None
        labels.append(query[i + 1 : i + 1 + length].decode("ascii", "replace"))
        i += 1 + length
    if i + 5 > len(query):
        return None
    qtype = struct.unpack("!H", query[i + 1 : i + 3])[0]
    question = query[12 : i + 5]
    name = ".".join(labels).lower()
    address = record.address_for(name)
    header = query[:2] + b"\x81\x80" + b"\x00\x01"
    if qtype != 1:
        return header + b"\x00\x00\x00\x00\x00\x00" + question
    answer = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + socket.inet_aton(address)
    return header + b"\x00\x01\x00\x00\x00\x00" + question + answer


def _serve_dns(record: Record) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", DNS_PORT))
    while True:
        data, peer = sock.recvfrom(2048)
        reply = _dns_answer(data, record)
        if reply is not None:
            sock.sendto(reply, peer)


class _Certificates:
    """A CA made for this detonation, and a certificate per server name, on demand."""

    def __init__(self, ca_dir: Path, private: Path) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self._x509, self._hashes, self._oid = x509, hashes, NameOID
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sless detonation")])
        now = datetime.datetime.now(datetime.UTC)
        self._ca = (
            x509.CertificateBuilder()
            .subject_name(self._ca_name)
            .issuer_name(self._ca_name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=800))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self._dir = private
        pem = serialization.Encoding.PEM
        (ca_dir / "ca.pem").write_bytes(self._ca.public_bytes(pem))
        key = self._key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        (private / "key.pem").write_bytes(key)
        (private / "key.pem").chmod(0o600)
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def context(self, name: str) -> ssl.SSLContext:
        with self._lock:
            if name not in self._contexts:
                self._contexts[name] = self._make(name)
            return self._contexts[name]

    def _make(self, name: str) -> ssl.SSLContext:
        x509 = self._x509
        now = datetime.datetime.now(datetime.UTC)
        try:
            alt: Any = x509.IPAddress(ipaddress.ip_address(name))
        except ValueError:
            alt = x509.DNSName(name)
        subject = x509.Name([x509.NameAttribute(self._oid.COMMON_NAME, name[:64])])
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._ca_name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=800))
            .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
            .sign(self._key, self._hashes.SHA256())
        )
        from cryptography.hazmat.primitives import serialization

        path = self._dir / f"c{len(self._contexts)}.pem"
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(path, self._dir / "key.pem")
        return context


def _first_bytes(conn: socket.socket | ssl.SSLSocket) -> bytes | None:
    """What the client sends first; None when it is silent, waiting for a greeting."""
    conn.settimeout(_SERVER_FIRST_S)
    try:
        return conn.recv(MAX_BYTES)
    except TimeoutError:
        return None


def _converse(conn: socket.socket | ssl.SSLSocket) -> bytes:
    """Play the server of a server-first line protocol (SMTP, its AUTH, FTP's log-in)
    far enough that the client sends what it came to send; record all of it. Only the
    first word of a line is looked at."""
    conn.settimeout(_READ_TIMEOUT_S)
    conn.sendall(b"220 sink ready\r\n")
    data, pending, in_body, prompts = b"", b"", False, 0
    while len(data) < MAX_BYTES:
        try:
            chunk = conn.recv(MAX_BYTES - len(data))
        except (TimeoutError, OSError):
            break
        if not chunk:
            break
        data += chunk
        pending += chunk
        while b"\n" in pending:
            line, _, pending = pending.partition(b"\n")
            line = line.rstrip(b"\r")
            if in_body:
                in_body = line != b"."
                reply = b"" if in_body else b"250 queued\r\n"
            elif prompts:
                prompts -= 1
                reply = b"334 UGFzc3dvcmQ6\r\n" if prompts else b"235 ok\r\n"
            else:
                reply, in_body, prompts = _reply(line)
            if reply:
                conn.sendall(reply)
            if reply.startswith(b"221"):
                return data
    return data


def _reply(line: bytes) -> tuple[bytes, bool, int]:
    """The answer to one command line: (reply, a message body follows, prompts left)."""
    words = line.split()
    verb = words[0].upper() if words else b""
    if verb in (b"EHLO", b"HELO"):
        return b"250-sink\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n", False, 0
    if verb == b"AUTH":
        if len(words) >= 3 or (len(words) == 2 and words[1].upper() != b"LOGIN"):
            # PLAIN with its answer or LOGIN with the user: one prompt (the password) left
            return (b"235 ok\r\n", False, 0) if words[1].upper() != b"LOGIN" else (
                b"334 UGFzc3dvcmQ6\r\n", False, 1)  # fmt: skip
        return b"334 VXNlcm5hbWU6\r\n", False, 2  # LOGIN: user, then password
    if verb == b"DATA":
        return b"354 go on\r\n", True, 0
    if verb == b"QUIT":
        return b"221 bye\r\n", False, 0
    if verb == b"USER":
        return b"331 password\r\n", False, 0
    if verb == b"PASS":
        return b"230 ok\r\n", False, 0
    return b"250 ok\r\n", False, 0


def _read_some(conn: socket.socket | ssl.SSLSocket, data: bytes) -> bytes:
    """More of what the client sends after ``data`` (which is not returned again): up to the
    end of an HTTP request, the connection's end, a pause, or ``MAX_BYTES``."""
    start = len(data)
    conn.settimeout(_READ_TIMEOUT_S)
    while data and len(data) < MAX_BYTES and not _whole_request(data):
        try:
            chunk = conn.recv(MAX_BYTES - len(data))
        except (TimeoutError, OSError):
            break
        if not chunk:
            break
        data += chunk
    return data[start:]


def _whole_request(data: bytes) -> bool:
    if b"\r\n\r\n" not in data or not data[:8].split(b" ")[0].isalpha():
        return False
    head, _, body = data.partition(b"\r\n\r\n")
    return len(body) >= _content_length(head)


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value.strip())
    return 0


def _handle(conn: socket.socket, record: Record, certs: _Certificates) -> None:
    entry: dict[str, Any] = {}
    try:
        raw = conn.getsockopt(socket.SOL_IP, _SO_ORIGINAL_DST, 16)
        port, address = struct.unpack("!H", raw[2:4])[0], socket.inet_ntoa(raw[4:8])
        host = record.by_address.get(address, address)
        entry = {"host": host, "port": port, "tls": False, "data": ""}
        with record.lock:
            record.connections.append(entry)
        conn.settimeout(_SERVER_FIRST_S)
        try:
            first = conn.recv(1, socket.MSG_PEEK)
        except TimeoutError:
            first = b""  # the client waits for the server to speak (SMTP, FTP)
        stream: socket.socket | ssl.SSLSocket = conn
        if first == b"\x16":
            entry["tls"] = True
            context = certs.context(host)
            context.sni_callback = lambda s, name, _c: _set_context(s, name, certs, entry)
            conn.settimeout(_READ_TIMEOUT_S)
            stream = context.wrap_socket(conn, server_side=True)
        first_bytes = None if first == b"" else _first_bytes(stream)
        if first_bytes is None:
            entry["data"] = base64.b64encode(_converse(stream)).decode()
            return
        data = first_bytes + _read_some(stream, first_bytes)
        entry["data"] = base64.b64encode(data).decode()
        if data[:8].split(b" ")[0].isalpha():
            stream.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    except (OSError, ssl.SSLError, ValueError) as e:
        entry["error"] = type(e).__name__
    finally:
        conn.close()


def _set_context(sock: Any, name: str | None, certs: _Certificates, entry: dict[str, Any]) -> None:
    if name:
        entry["sni"] = name
        sock.context = certs.context(name)


def _serve_tcp(record: Record, certs: _Certificates) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", SINK_PORT))
    server.listen(64)
    while True:
        conn, _ = server.accept()
        thread = threading.Thread(target=_handle, args=(conn, record, certs), daemon=True)
        record.handlers.append(thread)
        thread.start()


def main(argv: list[str]) -> int:
    out, ca_dir = Path(argv[0]), Path(argv[1])
    wait = argv[2] == "--wait"
    command = [] if wait else argv[3:]
    _setup_network()
    record = Record()
    certs = _Certificates(ca_dir, out.parent)
    threading.Thread(target=_serve_dns, args=(record,), daemon=True).start()
    threading.Thread(target=_serve_tcp, args=(record, certs), daemon=True).start()
    resolv = ca_dir / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    subprocess.run(["mount", "--bind", str(resolv), "/etc/resolv.conf"], check=True)
    fds = tuple(int(fd) for fd in os.environ.get("SLESS_PASS_FDS", "").split(",") if fd)
    given = b""
    if wait:  # made ahead of time (recording.py): the command comes on stdin, once
        line = sys.stdin.buffer.readline()
        if not line:  # never used: the process that made it is gone
            shutil.rmtree(out.parent, ignore_errors=True)
            return 0
        command = [str(part) for part in json.loads(line)]
        given = sys.stdin.buffer.readline(256)
    result = subprocess.run(command, pass_fds=fds, input=given, check=False)
    # connections still being read get their last chance
    for thread in list(record.handlers):
        thread.join(_READ_TIMEOUT_S)
    out.write_text(json.dumps({"exit": result.returncode, **record.as_json()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
