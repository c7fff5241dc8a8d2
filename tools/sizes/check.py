"""The size limits of sless/ (issue 11): no module over 500 lines, no function over 80.

``python -m tools.sizes.check`` lists every module and every function (methods and
nested functions included) over its limit and exits 1 when there is one. A function's
size is ``end_lineno - lineno + 1`` of its ``def`` (decorators not counted, its docstring
and comments counted). A module this long is usually two concepts, a function this long
several steps: split it along the seam, do not raise the limit.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sless"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def violations(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        where = path.relative_to(package.parent)
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES:
            found.append(f"{where}: {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(source, filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    found.append(
                        f"{where}:{node.lineno}: {node.name} is {size} lines"
                        f" (at most {MAX_FUNCTION_LINES})"
                    )
    return found


def main() -> int:
    found = violations()
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"{len(found)} over the size limits: split them", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
