"""Literal blobs that decode cleanly: hex, base64, either one around zlib/gzip/bz2/xz; and
what the decoded bytes are (marshalled bytecode, code, shell, or data)."""

from __future__ import annotations

import ast
import base64
import binascii
import bz2
import lzma
import re
import zlib

from sless.validation.deobfuscation.limits import MAX_DECODED_BYTES, MAX_LITERAL_CHARS

_QUOTED_RE = re.compile(r"""(["'`])([A-Za-z0-9+/=_\-]{16,}|(?:[0-9a-fA-F]{2}){8,})\1""")
_HEX_RE = re.compile(r"^(?:[0-9a-fA-F]{2})+$")
_B64_RE = re.compile(r"^[A-Za-z0-9+/_\-]+={0,2}$")


def blob_literals(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for match in _QUOTED_RE.finditer(text):
        literal = match.group(2)
        if len(literal) <= MAX_LITERAL_CHARS:
            found.append((text.count("\n", 0, match.start()) + 1, literal))
        if len(found) >= 200:
            break
    return found


def decode_blob(literal: str) -> tuple[str, bytes] | None:
    """(how, bytes) when ``literal`` is hex or base64 that decodes cleanly."""
    raw: bytes | None = None
    how = ""
    if _HEX_RE.match(literal):
        raw, how = bytes.fromhex(literal), "hex"
    elif _B64_RE.match(literal) and len(literal) >= 20:
        padded = literal.replace("-", "+").replace("_", "/")
        padded += "=" * (-len(padded) % 4)
        try:
            raw = base64.b64decode(padded, validate=True)
        except (ValueError, binascii.Error):
            return None
        how = "base64"
    if raw is None:
        return None
    unpacked = decompress(raw)
    if unpacked is not None:
        return f"{how}+{unpacked[0]}", unpacked[1]
    return how, raw


def decompress(raw: bytes) -> tuple[str, bytes] | None:
    """zlib, gzip, bz2 or xz by their headers, to a bounded size."""
    try:
        if raw[:1] == b"\x78" and raw[1:2] in (b"\x01", b"\x5e", b"\x9c", b"\xda"):
            return "zlib", zlib.decompressobj().decompress(raw, MAX_DECODED_BYTES)
        if raw[:2] == b"\x1f\x8b":
            return "gzip", zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(
                raw, MAX_DECODED_BYTES
            )
        if raw[:3] == b"BZh":
            return "bz2", bz2.BZ2Decompressor().decompress(raw, MAX_DECODED_BYTES)
        if raw[:6] == b"\xfd7zXZ\x00":
            return "xz", lzma.LZMADecompressor().decompress(raw, MAX_DECODED_BYTES)
    except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError):
        return None
    return None


def is_marshal(raw: bytes) -> bool:
    # a code object (TYPE_CODE, with or without FLAG_REF), or a .pyc header before one
    if len(raw) < 16:
        return False
    if raw[0] in (0x63, 0xE3) and raw[1:5] in (b"\x00\x00\x00\x00",) and b"\x00" in raw[:24]:
        return True
    return raw[2:4] == b"\r\n" and raw[16:17] in (b"\x63", b"\xe3")


def as_text(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8:
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text)
    return text if printable >= 0.95 * len(text) else None


_JS_HINT_RE = re.compile(r"\brequire\s*\(|\bfunction\b|=>|\bconst\s|\blet\s|\bvar\s|\bprocess\.")
_SHELL_HINT_RE = re.compile(
    r"(\b(curl|wget|bash|sh|nc|ncat|chmod|nohup|python3?|powershell)\b|/dev/tcp/|\|\s*sh\b)"
)


def language_of(text: str) -> str | None:
    """The suffix to scan decoded text as: Python, JavaScript, shell, or None (data)."""
    if _JS_HINT_RE.search(text):
        return ".js"
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None and any(not isinstance(n, ast.Expr) for n in tree.body):
        return ".py"
    if tree is not None and any(
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) for n in tree.body
    ):
        return ".py"
    if _SHELL_HINT_RE.search(text):
        return ".sh"
    return None
