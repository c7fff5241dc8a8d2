"""Entrypoint check: the handler file exists and defines the handler, before any build.

Python is parsed with ``ast`` (nothing is executed); JavaScript is checked for syntax
with ``node --check``, which parses without running. Whether the handler imports with its
dependencies is checked later, in the sandbox, by the build.
"""

from __future__ import annotations

import ast
import asyncio
import shutil
import time
from pathlib import Path

from sless.tasks import wait_for
from sless.validation.report import Finding, StageResult, Verdict

_NODE_CHECK_TIMEOUT_S = 10.0


#: the files the Node.js runtime server loads for a module, in its order (server.js)
_NODE_SUFFIXES = (".js", ".cjs", ".mjs", "/index.js")


def entry_file(entrypoint: str, runtime: str, directory: Path | None = None) -> tuple[str, str]:
    """``handler.handle`` → (``handler.py``, ``handle``); dotted modules become folders. For
    Node.js, the first of the files the runtime would load that ``directory`` holds
    (``index.mjs``: the AWS console's ES module template)."""
    module, _, func = entrypoint.rpartition(".")
    base = module.replace(".", "/")
    if runtime.startswith("python"):
        return base + ".py", func
    if directory is not None:
        for suffix in _NODE_SUFFIXES:
            if (directory / (base + suffix)).is_file():
                return base + suffix, func
    return base + ".js", func


def _python_defines(source: str, func: str) -> bool:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == func:
            return True
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == func for t in targets):
                return True
        if isinstance(node, ast.ImportFrom | ast.Import) and any(
            (alias.asname or alias.name) == func for alias in node.names
        ):
            return True
    return False


async def check_entrypoint(directory: Path, runtime: str, entrypoint: str) -> StageResult:
    started = time.perf_counter()
    filename, func = entry_file(entrypoint, runtime, directory)
    path = directory / filename
    findings: list[Finding] = []

    def add(rule: str, message: str, line: int | None = None) -> None:
        findings.append(
            Finding(rule=rule, message=message, file=filename, line=line, source="archive")
        )

    if not path.is_file():
        add("entrypoint-missing", f"the archive has no {filename} (entrypoint {entrypoint!r})")
    elif runtime.startswith("python"):
        try:
            source = path.read_text(encoding="utf-8")
            if not _python_defines(source, func):
                add("entrypoint-undefined", f"{filename} does not define {func}()")
        except SyntaxError as e:
            add("entrypoint-syntax-error", f"syntax error: {e.msg}", e.lineno)
        except (UnicodeDecodeError, ValueError) as e:
            add("entrypoint-unreadable", f"cannot read {filename}: {type(e).__name__}")
    else:
        message = await _node_syntax_error(path)
        if message:
            add("entrypoint-syntax-error", message)
    return StageResult(
        name="entrypoint",
        findings=findings,
        verdict=Verdict.REJECT if findings else Verdict.ALLOW,
        duration_ms=(time.perf_counter() - started) * 1000,
    )


async def _node_syntax_error(path: Path) -> str | None:
    node = shutil.which("node")
    if node is None:
        return None  # checked again when the handler is loaded in the sandbox
    process = await asyncio.create_subprocess_exec(
        node, "--check", str(path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        _, stderr = await wait_for(process.communicate(), _NODE_CHECK_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        return "syntax check timed out"
    if process.returncode == 0:
        return None
    # node prints "file:line", the source line, a caret line, then "SyntaxError: ..."
    lines = stderr.decode("utf-8", "replace").splitlines()
    error = next((ln for ln in lines if "Error" in ln), "syntax error")
    return error.strip()[:300]
