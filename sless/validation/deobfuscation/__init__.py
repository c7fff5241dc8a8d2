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

from dataclasses import dataclass
from pathlib import PurePosixPath

from sless.validation.deobfuscation.decoding import (
    as_text,
    blob_literals,
    decode_blob,
    is_marshal,
    language_of,
)
from sless.validation.deobfuscation.javascript import fold_javascript
from sless.validation.deobfuscation.limits import (
    JS_SUFFIXES,
    MAX_DEPTH,
    MAX_FOLD_BYTES,
    MAX_PAYLOADS,
    PY_SUFFIXES,
)
from sless.validation.deobfuscation.python import fold_python
from sless.validation.report import Finding, Verdict, static_finding

__all__ = ["MAX_PAYLOADS", "Derived", "derive"]


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
        if suffix in PY_SUFFIXES:
            view = fold_python(text, payloads)
        elif suffix in JS_SUFFIXES:
            view = fold_javascript(text, payloads)
    if view is not None and view != text:
        out.append(Derived(rel, suffix, view, line, "constant folding"))
    for number, literal in blob_literals(text):
        decoded = decode_blob(literal)
        if decoded is None:
            continue
        how, raw = decoded
        if is_marshal(raw):
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
        payload = as_text(raw)
        if payload is not None:
            payloads.append((number, payload, how))
    for number, payload, how in payloads:
        if len(out) >= MAX_PAYLOADS:
            break
        kind = language_of(payload)
        if kind is None:
            continue
        at = line if line is not None else number
        out.append(Derived(rel, kind, payload, at, how))
        _derive(rel, payload, kind, at, depth + 1, out, findings)
