"""Deobfuscation folds and decodes literals without running anything, within bounds."""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

from sless.validation.deobfuscation import MAX_PAYLOADS, derive


def _texts(rel: str, source: str) -> list[str]:
    derived, _findings = derive(rel, source)
    return [d.text for d in derived]


def test_python_concatenation_and_char_codes_fold_on_the_same_line() -> None:
    source = (
        "import builtins\n"
        "f = getattr(builtins, 'ev' + 'al')\n"
        "exec(''.join(chr(c) for c in [105, 109, 112, 111, 114, 116, 32, 111, 115]))\n"
    )
    derived, _ = derive("handler.py", source)
    view = next(d for d in derived if d.how == "constant folding")
    assert view.line is None
    lines = view.text.split("\n")
    assert lines[1] == "f = getattr(builtins, 'eval')"
    assert lines[2] == "exec('import os')"


def test_python_layered_decoders_become_a_payload_on_the_literal_line() -> None:
    code = "import os; os.system('id')"
    blob = base64.b64encode(zlib.compress(code.encode())).decode()
    source = f"import base64, zlib\n\n_b = {blob!r}\nexec(zlib.decompress(base64.b64decode(_b)))\n"
    derived, _ = derive("handler.py", source)
    payloads = [d for d in derived if d.text == code]
    assert payloads
    assert {d.line for d in payloads} <= {3, 4}
    assert all(d.suffix == ".py" for d in payloads)


def test_rot13_and_hex_fold() -> None:
    source = (
        "import codecs, binascii\n"
        "a = codecs.decode('flfgrz', 'rot13')\n"
        "b = binascii.unhexlify('6f732e73797374656d').decode()\n"
    )
    view = _texts("h.py", source)[0].split("\n")
    assert view[1] == "a = 'system'"
    assert view[2] == "b = 'os.system'"


def test_javascript_escapes_char_codes_joins_and_concatenation_fold() -> None:
    source = (
        "var a = ['\\x65\\x78\\x65\\x63'];\n"
        "const s = String.fromCharCode(101, 118, 97, 108);\n"
        "const m = require(['child', 'process'].join('_'));\n"
        "const g = globalThis['ev' + 'al'];\n"
    )
    view = _texts("handler.js", source)[0].split("\n")
    assert view[0] == "var a = ['exec'];"
    assert view[1] == 'const s = "eval";'
    assert view[2] == 'const m = require("child_process");'
    assert view[3] == 'const g = globalThis["eval"];'


def test_javascript_base64_literal_and_char_code_array_become_payloads() -> None:
    code = "require('child_process').execSync('id')"
    codes = ",".join(str(ord(c)) for c in code)
    source = f'const p = "{base64.b64encode(code.encode()).decode()}";\nconst c = [{codes}];\n'
    derived, _ = derive("handler.js", source)
    payloads = {(d.text, d.line) for d in derived if d.line is not None}
    assert (code, 1) in payloads
    assert (code, 2) in payloads


def test_marshalled_bytecode_is_a_finding_and_is_never_loaded() -> None:
    blob = base64.b64encode(b"\xe3\x00\x00\x00\x00" + b"\x00" * 40).decode()
    _, findings = derive("h.py", f"CODE = {blob!r}\n")
    assert [f.rule for f in findings] == ["encoded-python-bytecode"]
    assert findings[0].line == 1


def test_nothing_is_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    payload = f"open({str(marker)!r}, 'w').write('x')"
    source = (
        f"exec({payload!r})\n"
        f"exec(__import__('base64').b64decode({base64.b64encode(payload.encode()).decode()!r}))\n"
    )
    derive("h.py", source)
    derive("h.js", source)
    assert not marker.exists()


def test_recursion_and_payload_counts_are_bounded() -> None:
    code = "import os; os.system('id')"
    for _ in range(10):  # ten layers of base64 around the code
        code = (
            f"import base64\nexec(base64.b64decode({base64.b64encode(code.encode()).decode()!r}))"
        )
    derived, _ = derive("h.py", code)
    assert len(derived) <= MAX_PAYLOADS


def test_bad_input_never_raises() -> None:
    deep = "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    derive("deep.py", deep)
    derive("deep.js", "var x = " + "[" * 20000 + "]" * 20000 + ";\n")
    derive("broken.py", "def (:\n\x00\xff")
    derive("big.js", "var a = '" + "A" * (2 * 1024 * 1024) + "';\n")
    derive("min.js", ";".join(f"var v{i}='{i:x}'+'{i}'" for i in range(50_000)))
