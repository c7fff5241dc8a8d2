"""Homoglyph identifiers and encoded-data weak signals."""

from __future__ import annotations

import base64
import os

from sless.validation.report import Verdict
from sless.validation.text_checks import scan_text


def _rules(rel: str, text: str) -> dict[str, Verdict]:
    return {f.rule: f.severity for f in scan_text(rel, text.encode())}


def test_identifier_mixing_latin_and_cyrillic_is_rejected() -> None:
    source = "def check_\u0430ccess(u):\n    return True\n"
    assert _rules("handler.py", source)["unicode-homoglyph"] is Verdict.REJECT


def test_greek_letter_inside_a_latin_name_is_rejected_in_javascript() -> None:
    source = "const is_all\u03bfwed = () => true;\n"
    assert _rules("handler.js", source)["unicode-homoglyph"] is Verdict.REJECT


def test_whole_words_in_other_scripts_are_text() -> None:
    source = 'GREETING = {"ru": "Привет мир", "el": "Καλημέρα", "ja": "こんにちは"}\n'
    assert "unicode-homoglyph" not in _rules("handler.py", source)


def test_a_file_that_is_mostly_encoded_data_is_a_weak_signal() -> None:
    blob = base64.b64encode(os.urandom(6000)).decode()
    rules = _rules("handler.py", f"DATA = {blob!r}\n")
    assert rules["encoded-data-density"] is Verdict.ALLOW
    assert rules["high-entropy-literal"] is Verdict.ALLOW


def test_ordinary_code_has_no_encoded_signals() -> None:
    source = (
        "import json\n\nKEY = 'abc'\n\ndef handle(event, context):\n    return json.dumps(event)\n"
    )
    assert _rules("handler.py", source) == {}
