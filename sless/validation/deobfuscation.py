"""Deobfuscation: fold what the code computes from constants, decode what decodes cleanly,
and hand the result to the same rules.

Obfuscated loaders hide the names a rule looks for (``"ev" + "al"``, ``chr(101)...``,
``String.fromCharCode(...)``, ``'\\x65\\x76'``) or the whole payload (base64, hex, zlib,
char-code arrays, rot13). Nothing here executes tenant code: Python files are parsed with
:mod:`ast` and only a fixed set of pure operations on literals is evaluated (string and
bytes concatenation and repetition, ``join``, ``chr``, slicing, ``decode``, ``replace``,
and the decoders of :mod:`base64`, :mod:`binascii`, :mod:`codecs`, :mod:`zlib`,
:mod:`gzip`, :mod:`bz2`, :mod:`lzma`); JavaScript is folded on its text (escapes,
``String.fromCharCode`` of numbers, concatenated and joined literals, ``atob`` and
``Buffer.from(..., "base64"|"hex")`` of literals). ``marshal`` data is never loaded: it
can crash the interpreter, so a blob with a code-object header is itself a finding.

Each source file gives at most:

- a **folded view**: the file with every folded expression replaced by its value, with
  the same line numbers, so a finding in it is reported on the original line;
- **payloads**: decoded literals that read as code or shell, each scanned as its own
  file and reported on the line of the literal it came from. Payloads are unfolded again,
  to a bounded depth.

Every step is bounded (file size, literal size, decompressed size, number of payloads,
recursion depth), so a hostile file costs a bounded amount of work, never a crash.
"""

from __future__ import annotations

import ast
import base64
import binascii
import bz2
import codecs
import lzma
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from sless.validation.report import Finding, Verdict, static_finding

__all__ = ["Derived", "derive"]

#: files larger than this are not folded (their literals are still decoded)
MAX_FOLD_BYTES = 1024 * 1024
#: a literal longer than this is not decoded (the blob rules report it instead)
MAX_LITERAL_CHARS = 256 * 1024
#: decompressed or decoded output kept per literal
MAX_DECODED_BYTES = 1024 * 1024
#: payloads (decoded code) kept per source file, all depths together
MAX_PAYLOADS = 16
#: payloads of payloads, and so on
MAX_DEPTH = 3
#: a folded value longer than this is not put back into the view
MAX_VALUE_CHARS = 20_000
#: nesting of expressions followed when folding
_MAX_EXPR_DEPTH = 60

_PY = (".py", ".pyw")
_JS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


@dataclass(frozen=True)
class Derived:
    """Text derived from an upload file, to scan with the same rules."""

    #: the upload file it came from
    origin: str
    #: the suffix that tells semgrep its language
    suffix: str
    text: str
    #: None: same line numbers as ``origin`` (a folded view); else the literal's line
    line: int | None
    #: how it was obtained, for the finding message
    how: str


def derive(rel: str, text: str) -> tuple[list[Derived], list[Finding]]:
    """Folded views and decoded payloads of one file, and findings about its encodings."""
    out: list[Derived] = []
    findings: list[Finding] = []
    _derive(rel, text, PurePosixPath(rel).suffix.lower(), None, 0, out, findings)
    return out, findings


def _derive(
    rel: str,
    text: str,
    suffix: str,
    line: int | None,
    depth: int,
    out: list[Derived],
    findings: list[Finding],
) -> None:
    if depth > MAX_DEPTH or len(out) >= MAX_PAYLOADS:
        return
    payloads: list[tuple[int, str, str]] = []
    view: str | None = None
    if len(text) <= MAX_FOLD_BYTES:
        if suffix in _PY:
            view = _fold_python(text, payloads)
        elif suffix in _JS:
            view = _fold_javascript(text, payloads)
    if view is not None and view != text:
        out.append(Derived(rel, suffix, view, line, "constant folding"))
    for number, literal in _blob_literals(text):
        decoded = _decode_blob(literal)
        if decoded is None:
            continue
        how, raw = decoded
        if _is_marshal(raw):
            at = line if line is not None else number
            findings.append(
                static_finding(
                    "encoded-python-bytecode",
                    f"a {how} literal decodes to marshalled Python bytecode: code that "
                    "cannot be reviewed and only runs through marshal.loads",
                    rel,
                    at,
                    Verdict.REJECT,
                )
            )
            continue
        payload = _as_text(raw)
        if payload is not None:
            payloads.append((number, payload, how))
    for number, payload, how in payloads:
        if len(out) >= MAX_PAYLOADS:
            break
        kind = _language_of(payload)
        if kind is None:
            continue
        at = line if line is not None else number
        out.append(Derived(rel, kind, payload, at, how))
        _derive(rel, payload, kind, at, depth + 1, out, findings)


# -- blobs ------------------------------------------------------------------------------

_QUOTED_RE = re.compile(r"""(["'`])([A-Za-z0-9+/=_\-]{16,}|(?:[0-9a-fA-F]{2}){8,})\1""")
_HEX_RE = re.compile(r"^(?:[0-9a-fA-F]{2})+$")
_B64_RE = re.compile(r"^[A-Za-z0-9+/_\-]+={0,2}$")


def _blob_literals(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for match in _QUOTED_RE.finditer(text):
        literal = match.group(2)
        if len(literal) <= MAX_LITERAL_CHARS:
            found.append((text.count("\n", 0, match.start()) + 1, literal))
        if len(found) >= 200:
            break
    return found


def _decode_blob(literal: str) -> tuple[str, bytes] | None:
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
    unpacked = _decompress(raw)
    if unpacked is not None:
        return f"{how}+{unpacked[0]}", unpacked[1]
    return how, raw


def _decompress(raw: bytes) -> tuple[str, bytes] | None:
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


def _is_marshal(raw: bytes) -> bool:
    # a code object (TYPE_CODE, with or without FLAG_REF), or a .pyc header before one
    if len(raw) < 16:
        return False
    if raw[0] in (0x63, 0xE3) and raw[1:5] in (b"\x00\x00\x00\x00",) and b"\x00" in raw[:24]:
        return True
    return raw[2:4] == b"\r\n" and raw[16:17] in (b"\x63", b"\xe3")


def _as_text(raw: bytes) -> str | None:
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


def _language_of(text: str) -> str | None:
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


# -- Python -----------------------------------------------------------------------------


class _NotConstant(Exception):
    pass


_Value = str | bytes | int

_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "b64decode": lambda b: base64.b64decode(b + b"=" * (-len(b) % 4)),
    "standard_b64decode": lambda b: base64.b64decode(b + b"=" * (-len(b) % 4)),
    "urlsafe_b64decode": lambda b: base64.urlsafe_b64decode(b + b"=" * (-len(b) % 4)),
    "b32decode": base64.b32decode,
    "b16decode": lambda b: base64.b16decode(b, casefold=True),
    "b85decode": base64.b85decode,
    "a85decode": base64.a85decode,
    "decodebytes": base64.decodebytes,
    "unhexlify": binascii.unhexlify,
    "a2b_hex": binascii.unhexlify,
    "a2b_base64": binascii.a2b_base64,
    "fromhex": lambda b: bytes.fromhex(b.decode("ascii")),
    "decompress": lambda b: _bounded_decompress(b),
}


def _bounded_decompress(data: bytes) -> bytes:
    found = _decompress(data)
    if found is None:
        # zlib streams without the usual header flags, raw deflate
        try:
            return zlib.decompressobj().decompress(data, MAX_DECODED_BYTES)
        except zlib.error as e:
            raise _NotConstant from e
    return found[1]


class _Folder:
    """Evaluates the pure, literal-only part of Python expressions."""

    def __init__(self, names: dict[str, _Value]) -> None:
        self.names = names

    def value(self, node: ast.AST, depth: int = 0) -> _Value:
        if depth > _MAX_EXPR_DEPTH:
            raise _NotConstant
        result = self._value(node, depth + 1)
        if isinstance(result, str | bytes) and len(result) > MAX_DECODED_BYTES:
            raise _NotConstant
        return result

    def _value(self, node: ast.AST, depth: int) -> _Value:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes | int):
            if isinstance(node.value, bool):
                raise _NotConstant
            return node.value
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.names[node.id]
        if isinstance(node, ast.JoinedStr):
            return "".join(self._format_part(v, depth) for v in node.values)
        if isinstance(node, ast.BinOp):
            return self._binop(node, depth)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return self._slice(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        raise _NotConstant

    def _format_part(self, node: ast.AST, depth: int) -> str:
        if isinstance(node, ast.FormattedValue):
            inner = self.value(node.value, depth)
            if node.conversion != -1 or node.format_spec is not None:
                raise _NotConstant
            return inner if isinstance(inner, str) else str(inner)
        value = self.value(node, depth)
        if not isinstance(value, str):
            raise _NotConstant
        return value

    def _binop(self, node: ast.BinOp, depth: int) -> _Value:
        left, right = self.value(node.left, depth), self.value(node.right, depth)
        if isinstance(node.op, ast.Add):
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, bytes) and isinstance(right, bytes):
                return left + right
            if isinstance(left, int) and isinstance(right, int):
                return left + right
        if isinstance(node.op, ast.Sub) and isinstance(left, int) and isinstance(right, int):
            return left - right
        if isinstance(node.op, ast.Mult):
            if isinstance(left, str | bytes) and isinstance(right, int) and right < 1000:
                return left * right
            if isinstance(left, int) and isinstance(right, int):
                return left * right
        if isinstance(node.op, ast.BitXor) and isinstance(left, int) and isinstance(right, int):
            return left ^ right
        raise _NotConstant

    def _slice(self, node: ast.Subscript, depth: int) -> _Value:
        base = self.value(node.value, depth)
        if not isinstance(base, str | bytes):
            raise _NotConstant
        bounds = node.slice
        assert isinstance(bounds, ast.Slice)
        parts = [
            None if b is None else self.value(b, depth)
            for b in (bounds.lower, bounds.upper, bounds.step)
        ]
        if not all(p is None or isinstance(p, int) for p in parts):
            raise _NotConstant
        lower, upper, step = (p if isinstance(p, int) else None for p in parts)
        return base[lower:upper:step]

    def _items(self, node: ast.AST, depth: int) -> list[_Value]:
        if isinstance(node, ast.List | ast.Tuple):
            return [self.value(e, depth) for e in node.elts]
        if isinstance(node, ast.GeneratorExp | ast.ListComp) and len(node.generators) == 1:
            gen = node.generators[0]
            if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name):
                raise _NotConstant
            source = self._items(gen.iter, depth)
            inner = _Folder({**self.names})
            out = []
            for item in source:
                inner.names[gen.target.id] = item
                out.append(inner.value(node.elt, depth))
            return out
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "map"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Name)
        ):
            func = node.args[0].id
            items = self._items(node.args[1], depth)
            if func == "chr":
                return [_chr(i) for i in items]
            if func == "str":
                return [i if isinstance(i, str) else str(i) for i in items]
        value = self.value(node, depth)
        if isinstance(value, str | bytes):
            return list(value)
        raise _NotConstant

    def _call(self, node: ast.Call, depth: int) -> _Value:
        if node.keywords and not all(k.arg in ("encoding", "errors") for k in node.keywords):
            raise _NotConstant
        func = node.func
        if isinstance(func, ast.Name):
            if func.id == "chr" and len(node.args) == 1:
                return _chr(self.value(node.args[0], depth))
            if func.id in ("bytes", "bytearray") and len(node.args) == 1:
                items = self._items(node.args[0], depth)
                if all(isinstance(i, int) and 0 <= i < 256 for i in items):
                    return bytes(i for i in items if isinstance(i, int))
            if func.id in ("int",) and len(node.args) == 2:
                text, base = (self.value(a, depth) for a in node.args)
                if isinstance(text, str) and isinstance(base, int):
                    try:
                        return int(text, base)
                    except ValueError as e:
                        raise _NotConstant from e
            if func.id in _DECODERS and node.args:
                return self._decode(func.id, node.args, depth)
            raise _NotConstant
        if not isinstance(func, ast.Attribute):
            raise _NotConstant
        name = func.attr
        if name == "join" and len(node.args) == 1:
            sep = self.value(func.value, depth)
            items = self._items(node.args[0], depth)
            if isinstance(sep, str) and all(isinstance(i, str) for i in items):
                return sep.join(i for i in items if isinstance(i, str))
            if isinstance(sep, bytes) and all(isinstance(i, bytes) for i in items):
                return sep.join(i for i in items if isinstance(i, bytes))
            raise _NotConstant
        if name == "decode" and self._dotted(func.value) == "codecs":
            return self._codecs(node.args, depth)
        if name in ("decode", "encode", "replace", "lower", "upper", "strip", "swapcase"):
            return self._method(self.value(func.value, depth), name, node, depth)
        if name in _DECODERS and node.args:
            return self._decode(name, node.args, depth)
        raise _NotConstant

    def _dotted(self, node: ast.AST) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return self._dotted(node.value) + "." + node.attr
        return ""

    def _method(self, base: _Value, name: str, node: ast.Call, depth: int) -> _Value:
        args = [self.value(a, depth) for a in node.args]
        try:
            if name == "decode" and isinstance(base, bytes):
                encoding = args[0] if args and isinstance(args[0], str) else "utf-8"
                return base.decode(_plain_codec(encoding))
            if name == "encode" and isinstance(base, str):
                encoding = args[0] if args and isinstance(args[0], str) else "utf-8"
                return base.encode(_plain_codec(encoding))
            if name == "replace" and isinstance(base, str) and len(args) == 2:
                old, new = args
                if isinstance(old, str) and isinstance(new, str):
                    return base.replace(old, new)
            if name in ("lower", "upper", "strip", "swapcase") and isinstance(base, str):
                return str(getattr(base, name)(*[a for a in args if isinstance(a, str)]))
        except (UnicodeError, LookupError) as e:
            raise _NotConstant from e
        raise _NotConstant

    def _codecs(self, args: list[ast.expr], depth: int) -> _Value:
        if len(args) != 2:
            raise _NotConstant
        data, codec = (self.value(a, depth) for a in args)
        if not isinstance(codec, str):
            raise _NotConstant
        codec = codec.lower().replace("-", "_")
        try:
            if codec in ("rot13", "rot_13") and isinstance(data, str):
                return codecs.decode(data, "rot13")
            if codec in ("hex", "hex_codec", "base64", "base_64", "zlib", "zlib_codec", "bz2"):
                raw = data.encode("latin-1") if isinstance(data, str) else data
                if not isinstance(raw, bytes):
                    raise _NotConstant
                if codec.startswith("zlib") or codec == "bz2":
                    return _bounded_decompress(raw)
                return codecs.decode(raw, codec)
        except (ValueError, TypeError, binascii.Error, LookupError) as e:
            raise _NotConstant from e
        raise _NotConstant

    def _decode(self, name: str, args: list[ast.expr], depth: int) -> bytes:
        data = self.value(args[0], depth)
        raw = data.encode("latin-1", "replace") if isinstance(data, str) else data
        if not isinstance(raw, bytes) or len(raw) > MAX_LITERAL_CHARS:
            raise _NotConstant
        try:
            return _DECODERS[name](raw)
        except (ValueError, TypeError, binascii.Error, UnicodeError) as e:
            raise _NotConstant from e


def _plain_codec(name: str) -> str:
    canonical = codecs.lookup(name).name
    if canonical not in ("utf-8", "ascii", "latin-1", "iso8859-1", "utf-16", "cp1252"):
        raise LookupError(canonical)
    return canonical


def _chr(value: _Value) -> str:
    if isinstance(value, int) and 0 <= value < 0x110000:
        return chr(value)
    raise _NotConstant


def _module_constants(tree: ast.Module, folder: _Folder) -> dict[str, _Value]:
    """Names assigned once, at module or function level, to something that folds."""
    counts: dict[str, int] = {}
    assigned: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    counts[target.id] = counts.get(target.id, 0) + 1
                    assigned[target.id] = node.value
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
            counts[node.target.id] = counts.get(node.target.id, 0) + 2
    for _ in range(3):  # constants defined from constants
        for name, expr in assigned.items():
            if counts.get(name) == 1 and name not in folder.names:
                try:
                    folder.names[name] = folder.value(expr)
                except (_NotConstant, RecursionError, MemoryError, OverflowError):
                    continue
    return folder.names


def _fold_python(text: str, payloads: list[tuple[int, str, str]]) -> str | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    folder = _Folder({})
    try:
        _module_constants(tree, folder)
    except RecursionError:
        return None
    lines = text.split("\n")
    edits: list[tuple[int, int, int, int, str]] = []
    try:
        _collect_edits(tree, folder, edits, payloads)
    except RecursionError:
        return None
    return _apply(lines, edits)


def _collect_edits(
    node: ast.AST,
    folder: _Folder,
    edits: list[tuple[int, int, int, int, str]],
    payloads: list[tuple[int, str, str]],
) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr) and not isinstance(child, ast.Constant | ast.Name):
            folded = _try_fold(child, folder)
            if folded is not None:
                value = folded.decode("utf-8", "replace") if isinstance(folded, bytes) else folded
                if isinstance(value, str) and child.end_lineno is not None:
                    if len(value) <= MAX_VALUE_CHARS:
                        edits.append(
                            (
                                child.lineno,
                                child.col_offset,
                                child.end_lineno,
                                child.end_col_offset or 0,
                                repr(value),
                            )
                        )
                    if len(value) >= 8 and len(payloads) < MAX_PAYLOADS:
                        payloads.append((child.lineno, value, "folded expression"))
                    continue
        if isinstance(child, ast.Name) and child.id in folder.names:
            known = folder.names[child.id]
            if (
                isinstance(known, str)
                and len(known) <= 200
                and child.end_lineno is not None
                and isinstance(child.ctx, ast.Load)
            ):
                edits.append(
                    (
                        child.lineno,
                        child.col_offset,
                        child.end_lineno,
                        child.end_col_offset or 0,
                        repr(known),
                    )
                )
            continue
        _collect_edits(child, folder, edits, payloads)


def _try_fold(node: ast.expr, folder: _Folder) -> _Value | None:
    try:
        value = folder.value(node)
    except (_NotConstant, RecursionError, MemoryError, OverflowError, ValueError):
        return None
    return value if isinstance(value, str | bytes) else None


def _apply(lines: list[str], edits: list[tuple[int, int, int, int, str]]) -> str:
    """Replace spans (1-based lines, 0-based UTF-8 byte columns) keeping the line count."""
    encoded = [line.encode("utf-8") for line in lines]
    for start, col, end, end_col, value in sorted(edits, reverse=True):
        if start < 1 or end > len(encoded):
            continue
        head = encoded[start - 1][:col]
        tail = encoded[end - 1][end_col:]
        # a multi-line expression becomes one line followed by empty ones
        replacement = [head + value.encode("utf-8") + tail] + [b""] * (end - start)
        encoded[start - 1 : end] = replacement
    return "\n".join(line.decode("utf-8", "replace") for line in encoded)


# -- JavaScript -------------------------------------------------------------------------

_JS_STRING_RE = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\\n])*)\1""")
_JS_ESCAPE_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|u\{[0-9a-fA-F]{1,6}\})")
_JS_CONCAT_RE = re.compile(r"""(["'])((?:(?!\1)[^\\\n])*)\1\s*\+\s*(["'])((?:(?!\3)[^\\\n])*)\3""")
_JS_JOIN_RE = re.compile(
    r"""\[\s*((?:(["'])(?:(?!\2)[^\\\n])*\2\s*,\s*)*(["'])(?:(?!\3)[^\\\n])*\3)\s*,?\s*\]\s*"""
    r"""\.join\(\s*(["'])((?:(?!\4)[^\\\n])*)\4\s*\)"""
)
_JS_FROMCHARCODE_RE = re.compile(
    r"String\.fromCharCode\(\s*((?:0x[0-9a-fA-F]+|\d+)(?:\s*,\s*(?:0x[0-9a-fA-F]+|\d+))*)\s*\)"
)
_JS_NUMBER_ARRAY_RE = re.compile(
    r"\[\s*((?:0x[0-9a-fA-F]+|\d+)(?:\s*,\s*(?:0x[0-9a-fA-F]+|\d+)){7,})\s*\]"
)
_JS_DECODE_RE = re.compile(
    r"""(?:atob\(\s*(["'])([A-Za-z0-9+/=]{8,})\1\s*\)"""
    r"""|Buffer\.from\(\s*(["'])([A-Za-z0-9+/=_-]{8,})\3\s*,\s*(["'])(base64|hex)\5\s*\)"""
    r"""(?:\.toString\([^)]*\))?)"""
)
_JS_STRING_ITEM_RE = re.compile(r"""(["'])((?:(?!\1)[^\\\n])*)\1""")


def _js_literal(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped.replace("\r", "\\r") + '"'


def _fold_javascript(text: str, payloads: list[tuple[int, str, str]]) -> str:
    for match in _JS_NUMBER_ARRAY_RE.finditer(text):
        decoded = _char_codes(match.group(1))
        if decoded is not None and len(payloads) < MAX_PAYLOADS:
            payloads.append((text.count("\n", 0, match.start()) + 1, decoded, "char codes"))
    view = _JS_STRING_RE.sub(_unescape_js, text)
    view = _JS_FROMCHARCODE_RE.sub(lambda m: _js_or_same(m, _char_codes(m.group(1))), view)
    view = _JS_DECODE_RE.sub(lambda m: _js_decoded(m, payloads, view), view)
    for _ in range(8):  # "a" + "b" + "c" folds one pair per pass
        folded = _JS_CONCAT_RE.sub(lambda m: _js_literal(m.group(2) + m.group(4)), view)
        folded = _JS_JOIN_RE.sub(_js_join, folded)
        if folded == view:
            break
        view = folded
    return view


def _unescape_js(match: re.Match[str]) -> str:
    body = match.group(2)
    if "\\" not in body or not _JS_ESCAPE_RE.search(body):
        return match.group(0)

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        number = int(code[1:].strip("{}"), 16)
        char = chr(number) if number < 0x110000 else ""
        if char in "\\\"'\n\r" or not char.isprintable():
            return m.group(0)
        return char

    return match.group(1) + _JS_ESCAPE_RE.sub(one, body) + match.group(1)


def _char_codes(numbers: str) -> str | None:
    try:
        codes = [int(n, 0) for n in numbers.replace(" ", "").split(",")]
    except ValueError:
        return None
    if not all(9 <= c < 0x110000 for c in codes):
        return None
    text = "".join(chr(c) for c in codes)
    printable = sum(c.isprintable() or c in "\n\t\r" for c in text)
    return text if printable == len(text) and any(c.isalpha() for c in text) else None


def _js_or_same(match: re.Match[str], value: str | None) -> str:
    return match.group(0) if value is None else _js_literal(value)


def _js_decoded(match: re.Match[str], payloads: list[tuple[int, str, str]], text: str) -> str:
    literal = match.group(2) or match.group(4) or ""
    how = match.group(6) or "base64"
    try:
        if how == "hex":
            raw = bytes.fromhex(literal)
        else:
            padded = literal.replace("-", "+").replace("_", "/")
            raw = base64.b64decode(padded + "=" * (-len(padded) % 4), validate=True)
    except (ValueError, binascii.Error):
        return match.group(0)
    value = _as_text(raw)
    if value is None:
        return match.group(0)
    if len(payloads) < MAX_PAYLOADS:
        payloads.append((text.count("\n", 0, match.start()) + 1, value, how))
    return (
        _js_literal(value)
        if len(value) <= MAX_VALUE_CHARS and "\n" not in value
        else match.group(0)
    )


def _js_join(match: re.Match[str]) -> str:
    items = [m.group(2) for m in _JS_STRING_ITEM_RE.finditer(match.group(1))]
    return _js_literal(match.group(5).join(items))
