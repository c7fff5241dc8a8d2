"""The console's name fields check names in the browser (issue 31).

Chromium compiles an input's ``pattern`` with the ``v`` flag, where an unescaped ``-`` in
a character class is a syntax error (``Invalid character in character class``): the
browser then ignores the pattern and checks nothing. Every ``pattern`` of the console's
scripts is put in a real input here and must tell a DNS-1123 label from a bad name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import Browser

STATIC = Path(__file__).resolve().parents[2] / "sless" / "gateway" / "console" / "static"


def _patterns() -> list[str]:
    found = []
    for script in sorted(STATIC.glob("*.js")):
        for literal in re.findall(r'pattern: ("(?:[^"\\]|\\.)*")', script.read_text()):
            found.append(json.loads(literal))
    return found


def test_every_name_pattern_compiles_and_checks(browser: Browser) -> None:
    patterns = _patterns()
    assert len(patterns) >= 2  # the tenant name (admin) and the function name (tenant)
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text))
    try:
        for pattern in patterns:
            page.set_content("<input id='n'>")
            verdicts = page.evaluate(
                """(pattern) => {
                  const input = document.getElementById("n");
                  input.pattern = pattern;
                  return ["good-name", "a", "Bad_Name", "-lead", "trail-"].map((v) => {
                    input.value = v;
                    return input.validity.patternMismatch;
                  });
                }""",
                pattern,
            )
            assert verdicts == [False, False, True, True, True], pattern
    finally:
        page.close()
    assert not [e for e in errors if "pattern" in e.lower() or "regular expression" in e], errors
