"""Attack: code that forges the harness's last line to end its detonation unseen.

The harness says ``done`` on its trace when it got through the import and the calls; a
run without it is ``detonation-incomplete`` (review). The trace is a descriptor of the
process under test, so code could write ``{"kind": "done"}`` on it and exit at import:
the handler was never called, and the run looked finished. The harness's ``done`` now
carries a value it read before the code ran, which the code never had.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sless.validation.detonation import Detonation, detonate, unavailable
from sless.validation.report import Verdict

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

_FORGED = '{"kind": "done", "budget_left": 0.5}\\n'

_PY = f"""\
import os
for fd in range(1, 20):
    try:
        os.write(fd, b'{_FORGED}')
    except OSError:
        pass
os._exit(0)
def handle(event, context):
    return 'ok'
"""

_JS = f"""\
const fs = require('fs');
for (let fd = 1; fd < 20; fd++) {{
  try {{ fs.writeSync(fd, '{_FORGED}'); }} catch (e) {{}}
}}
process.exit(0);
exports.handle = async () => 'ok';
"""


@pytest.mark.parametrize(
    ("runtime", "name", "text"),
    [("python3.11", "handler.py", _PY), ("nodejs20", "handler.js", _JS)],
)
async def test_a_forged_done_line_does_not_finish_the_detonation(
    tmp_path: Path, runtime: str, name: str, text: str
) -> None:
    os.chmod(tmp_path, 0o755)
    (tmp_path / name).write_text(text)
    os.chmod(tmp_path / name, 0o644)
    stage = await detonate(tmp_path, runtime, "handler.handle", Detonation())
    assert stage.verdict is Verdict.REVIEW, stage
    assert "detonation-incomplete" in {f.rule for f in stage.findings}
