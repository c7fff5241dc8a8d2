"""Folding JavaScript on its text: escapes, ``String.fromCharCode`` of numbers, literal
concatenation and ``join``, ``atob``/``Buffer.from`` of literals, char-code arrays.

There is no JavaScript parser here: the folds are regular expressions over string and
number literals only, each keeping the text's line count.
"""

from __future__ import annotations

import base64
import binascii
import re

from sless.validation.deobfuscation.decoding import as_text
from sless.validation.deobfuscation.limits import MAX_PAYLOADS, MAX_VALUE_CHARS

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


def fold_javascript(text: str, payloads: list[tuple[int, str, str]]) -> str:
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
    value = as_text(raw)
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
