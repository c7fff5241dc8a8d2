"""Folding Python: evaluate the pure, literal-only part of expressions with :mod:`ast`.

Only a fixed set of operations on literals is evaluated; nothing is imported, called or
executed. The result is the file with each folded expression replaced by its value, on
the same lines.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import zlib
from collections.abc import Callable

from sless.validation.deobfuscation.decoding import decompress
from sless.validation.deobfuscation.limits import (
    MAX_DECODED_BYTES,
    MAX_EXPR_DEPTH,
    MAX_LITERAL_CHARS,
    MAX_PAYLOADS,
    MAX_VALUE_CHARS,
)


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
    found = decompress(data)
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
        if depth > MAX_EXPR_DEPTH:
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


def fold_python(text: str, payloads: list[tuple[int, str, str]]) -> str | None:
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
