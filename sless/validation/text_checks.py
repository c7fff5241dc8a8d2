"""The checks semgrep cannot do, on each file's bytes: Unicode tricks, source encodings,
encoded indicators, opaque binaries.

Design and security reasoning:

- Each file is read with ``O_NOFOLLOW`` and a size cap; a bigger file gets a review
  finding for the part that was not read.
- Trojan-Source bidi controls (CVE-2021-42574), invisible characters in code and payloads
  hidden in variation selectors or tag characters (the 2025 "GlassWorm" npm/VS Code
  campaign) are not visible to a reviewer and barely to a parser.
- Python source-encoding tricks (``# coding: unicode_escape`` turns escapes in comments
  into live code) make Python read another file than the one semgrep parsed.
- Opaque compiled files (``.pyc`` next to a module is imported instead of reviewable
  source, native extensions, executables) run but cannot be reviewed.
"""

from __future__ import annotations

import base64
import codecs
import math
import os
import re
import stat
import unicodedata
from pathlib import Path

from sless.validation.report import Finding, Verdict, static_finding

__all__ = ["MAX_TEXT_BYTES", "read_capped", "scan_all_text", "scan_text"]

#: per-file cap for the Python text checks; bigger files get a review finding
MAX_TEXT_BYTES = 8 * 1024 * 1024

_PY_SUFFIXES = frozenset({".py", ".pyw", ".pyi"})
_OPAQUE_SUFFIXES = frozenset(
    {".pyc", ".pyo", ".pyd", ".so", ".dylib", ".dll", ".node", ".exe", ".wasm", ".jar"}
)
_OPAQUE_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\0asm")
#: encodings under which Python source means what a reader (and semgrep) sees
_SAFE_SOURCE_ENCODINGS = frozenset({"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252"})
_CODING_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")

# Trojan Source (CVE-2021-42574): embeddings, overrides and isolates reorder what is shown.
_BIDI_RE = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Characters that render as nothing (or as a blank) and so can hide or split identifiers.
_INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2060-\u2064"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
# A run of tag characters or variation selectors long enough to encode bytes (GlassWorm).
_HIDDEN_PAYLOAD_RE = re.compile("[\ufe00-\ufe0f\U000e0000-\U000e007f\U000e0100-\U000e01ef]{8,}")


def scan_all_text(directory: Path, files: list[str]) -> list[Finding]:
    findings: list[Finding] = []
    for rel in files:
        data, truncated = read_capped(directory / rel)
        if data is None:
            findings.append(
                static_finding("unscanned-entry", "could not be read safely", rel, None)
            )
            continue
        findings.extend(scan_text(rel, data))
        if truncated:
            findings.append(
                static_finding(
                    "file-too-large",
                    f"larger than {MAX_TEXT_BYTES} bytes; the rest was not text-checked",
                    rel,
                    None,
                )
            )
    return findings


def read_capped(path: Path) -> tuple[bytes | None, bool]:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None, False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, False
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_TEXT_BYTES + 1)
    except OSError:
        return None, False
    finally:
        os.close(fd)
    return data[:MAX_TEXT_BYTES], len(data) > MAX_TEXT_BYTES


def scan_text(rel: str, data: bytes) -> list[Finding]:
    """The checks semgrep cannot do, on one file's bytes (pure; ``rel`` names the file)."""
    suffix = Path(rel).suffix.lower()
    if suffix in _OPAQUE_SUFFIXES or data.startswith(_OPAQUE_MAGIC):
        return [
            static_finding(
                "opaque-binary",
                "compiled or native code (.pyc, .so, .node, executable): it runs but "
                "cannot be reviewed; ship source and declare dependencies instead",
                rel,
                None,
            )
        ]
    if b"\0" in data[:8192]:
        return []  # other binary data (images, archives): nothing here can execute it
    findings: list[Finding] = []
    if suffix in _PY_SUFFIXES:
        findings.extend(_check_python_encoding(rel, data))
    text = data.decode("utf-8", "replace")
    findings.extend(_check_unicode(rel, text))
    findings.extend(_check_encoded_literals(rel, text))
    if suffix in _CODE_SUFFIXES:
        findings.extend(_check_homoglyphs(rel, text))
        findings.extend(_check_encoded_density(rel, text))
    return findings


_CODE_SUFFIXES = frozenset(
    {".py", ".pyw", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"}
)
# Scripts whose letters look like Latin ones (Unicode TR39 confusables): a word mixing
# one of them with Latin letters is a homoglyph, e.g. "check_\u0430ccess" with a
# Cyrillic "a".
_CONFUSABLE_SCRIPTS = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC"})
_WORD_RE = re.compile(r"[^\W\d_]\w*")
_MAX_WORDS = 200_000


def _script(char: str) -> str:
    if char.isascii():
        return "LATIN" if char.isalpha() else ""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0]


def _check_homoglyphs(rel: str, text: str) -> list[Finding]:
    """Words that mix Latin letters with look-alike letters of another script."""
    for count, match in enumerate(_WORD_RE.finditer(text)):
        if count > _MAX_WORDS:
            break
        word = match.group()
        if word.isascii():
            continue
        scripts = {_script(c) for c in word if c.isalpha()}
        if "LATIN" in scripts and scripts & _CONFUSABLE_SCRIPTS:
            return [
                static_finding(
                    "unicode-homoglyph",
                    f"{word!r} mixes Latin letters with look-alike letters of "
                    f"{', '.join(sorted(scripts & _CONFUSABLE_SCRIPTS)).lower()}: a name "
                    "that reads like another one but is not (homoglyph attack)",
                    rel,
                    _line_of(text, match.start()),
                    Verdict.REJECT,
                )
            ]
    return []


#: long literals of base64/hex alphabet that make up this much of a code file
_DENSITY_NOTE = 0.4
_DENSITY_MIN_CHARS = 2048
_DENSE_LITERAL_RE = re.compile(r"""["'`]([A-Za-z0-9+/=_-]{64,})["'`]""")
_ENTROPY_NOTE = 5.2
_ENTROPY_MIN_CHARS = 64


def _check_encoded_density(rel: str, text: str) -> list[Finding]:
    """Weak signals: much of the file is encoded data, or a literal is near-random."""
    findings: list[Finding] = []
    encoded = 0
    densest = 0.0
    for count, match in enumerate(_DENSE_LITERAL_RE.finditer(text)):
        if count > _MAX_LITERALS:
            break
        literal = match.group(1)
        encoded += len(literal)
        if len(literal) >= _ENTROPY_MIN_CHARS and densest < _ENTROPY_NOTE:
            densest = max(densest, _entropy(literal[:4096]))
    if encoded >= _DENSITY_MIN_CHARS and encoded >= _DENSITY_NOTE * len(text):
        findings.append(
            static_finding(
                "encoded-data-density",
                f"{encoded} of {len(text)} characters are encoded literals: the code is "
                "mostly data it decodes (a weak signal)",
                rel,
                None,
                Verdict.ALLOW,
            )
        )
    if densest >= _ENTROPY_NOTE:
        findings.append(
            static_finding(
                "high-entropy-literal",
                f"a string literal with {densest:.1f} bits of entropy per character: "
                "compressed or encrypted data (a weak signal)",
                rel,
                None,
                Verdict.ALLOW,
            )
        )
    return findings


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


# A quoted literal long enough to hide a URL or a path: hex (pairs of digits) or base64.
_HEX_LITERAL_RE = re.compile(r"""["'`]((?:[0-9a-fA-F]{2}){8,})["'`]""")
_B64_LITERAL_RE = re.compile(r"""["'`]([A-Za-z0-9+/_-]{16,}={0,2})["'`]""")
_MAX_LITERALS = 500
_MAX_LITERAL_CHARS = 256 * 1024
#: what no function hides in an encoded string: mining pools, the cloud metadata service,
#: shells wired to sockets, the places credentials live
_ENCODED_INDICATORS = (
    "stratum+tcp://",
    "stratum+ssl://",
    "stratum+tls://",
    "xmrig",
    "169.254.169.254",
    "metadata.google.internal",
    "/dev/tcp/",
    "/bin/sh -i",
    "/bin/bash -i",
    "/var/run/secrets/kubernetes.io",
    "/proc/self/environ",
    ".aws/credentials",
    ".ssh/id_",
)


def _decoded(literal: str, *, hex_digits: bool) -> str | None:
    try:
        if hex_digits:
            raw = bytes.fromhex(literal)
        else:
            padded = literal + "=" * (-len(literal) % 4)
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except ValueError:
        return None
    return raw.decode("latin-1").lower()


def _check_encoded_literals(rel: str, text: str) -> list[Finding]:
    """String literals that decode (hex or base64) to a known indicator: what a rule on
    the plain text cannot see, however the decoding call itself is disguised."""
    found = 0
    for regex, hex_digits in ((_HEX_LITERAL_RE, True), (_B64_LITERAL_RE, False)):
        for match in regex.finditer(text):
            found += 1
            if found > _MAX_LITERALS:
                return []
            literal = match.group(1)
            if len(literal) > _MAX_LITERAL_CHARS:
                continue
            decoded = _decoded(literal, hex_digits=hex_digits)
            if decoded is None:
                continue
            hit = next((i for i in _ENCODED_INDICATORS if i in decoded), None)
            if hit is not None:
                kind = "hex" if hex_digits else "base64"
                return [
                    static_finding(
                        "encoded-indicator",
                        f"a {kind} string literal decodes to text containing {hit!r}: "
                        "a mining pool, metadata address, shell or credential path kept "
                        "out of sight",
                        rel,
                        _line_of(text, match.start()),
                        Verdict.REJECT,
                    )
                ]
    return []


def _check_python_encoding(rel: str, data: bytes) -> list[Finding]:
    for number, raw in enumerate(data.splitlines()[:2], start=1):
        match = _CODING_RE.match(raw)
        if match is None:
            continue
        name = match.group(1).decode("ascii", "replace")
        try:
            canonical = codecs.lookup(name).name
        except LookupError:
            canonical = f"unknown codec {name!r}"
        if canonical in _SAFE_SOURCE_ENCODINGS:
            return []
        return [
            static_finding(
                "python-source-encoding",
                f"source declares encoding {canonical}: Python decodes the file differently "
                "from what reviewers and scanners read (e.g. unicode_escape turns escapes "
                "in comments into code)",
                rel,
                number,
                Verdict.REJECT,
            )
        ]
    return []


def _check_unicode(rel: str, text: str) -> list[Finding]:
    findings: list[Finding] = []
    payload = _HIDDEN_PAYLOAD_RE.search(text)
    if payload is not None:
        findings.append(
            static_finding(
                "unicode-hidden-payload",
                f"{len(payload.group())} consecutive invisible variation-selector/tag "
                "characters: bytes encoded out of sight (GlassWorm-style payload)",
                rel,
                _line_of(text, payload.start()),
                Verdict.REJECT,
            )
        )
    bidi = list(_BIDI_RE.finditer(text))
    if bidi:
        findings.append(
            static_finding(
                "unicode-bidi-control",
                f"{len(bidi)} bidirectional control character(s) (first U+"
                f"{ord(bidi[0].group()):04X}): code displays differently from how it runs "
                "(Trojan Source, CVE-2021-42574)",
                rel,
                _line_of(text, bidi[0].start()),
                Verdict.REJECT,
            )
        )
    hidden = [m for m in _INVISIBLE_RE.finditer(text) if _suspicious_invisible(text, m.start())]
    if hidden:
        findings.append(
            static_finding(
                "unicode-invisible",
                f"{len(hidden)} invisible character(s) next to code (first U+"
                f"{ord(hidden[0].group()):04X}): identifiers or strings that look identical "
                "but differ",
                rel,
                _line_of(text, hidden[0].start()),
            )
        )
    return findings


def _suspicious_invisible(text: str, index: int) -> bool:
    """Invisible characters inside emoji sequences or non-Latin words are ordinary text."""
    char = text[index]
    if char == "\ufeff" and index == 0:
        return False  # byte-order mark
    before = text[index - 1] if index > 0 else "\n"
    after = text[index + 1] if index + 1 < len(text) else "\n"
    if char in "\ufe0e\ufe0f" or "\U000e0020" <= char <= "\U000e007f":
        # emoji presentation selectors, subdivision-flag tags
        return before.isascii()
    return before.isascii() or after.isascii()


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1
