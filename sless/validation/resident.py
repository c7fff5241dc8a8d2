"""A resident semgrep for small scans: ``semgrep lsp`` kept running, one file at a time.

A re-upload that changes a file or two scans only those (:mod:`sless.validation.caching`),
and a one-shot ``osemgrep scan`` then costs its process start (~0.15-0.3 s on a shared
machine). semgrep's language server stays up with the rules loaded and scans one file in
~10 ms. It was not written for this, so every answer is checked, and anything unexpected
makes :meth:`ResidentSemgrep.scan` return None: the caller then runs the one-shot scan,
which stays the reference (its errors, timeouts and verdicts are what validation means).

Design and security reasoning:

- **Its own workspace.** The server only scans files inside its workspace folder, chosen
  by its own target walk (which honours ``.gitignore`` and ``.semgrepignore``). The
  workspace is a private directory of ours, holding nothing but copies of the files to
  scan under names we make (``<n><suffix>``): a tenant's ignore files or paths never reach
  it. Rules select files by suffix only, which the copy keeps.
- **Errors are not dropped silently.** The server reports parse errors and per-file
  timeouts only in its log, not in its answer. Each file is scanned alone, and the log of
  that scan must say, line for line, ``Semgrep errors: `` with nothing after it,
  ``Semgrep skipped 0 rules`` and ``Scanned 1 files``; any other outcome (an error, a rule
  skipped, the file not scanned, no answer in time) gives None.
- **Verdicts from our rule files.** Diagnostics carry the rule id and message, not the
  rule's metadata: the verdict of each id is read from ``rules/`` (the same files the
  server loaded).
- **Small scans only.** Files are scanned one after the other; past ``MAX_FILES`` (or a
  file over ``MAX_BYTES``) the one-shot scan is faster and is used.
- Same environment as the one-shot scan (metrics off, no version check); one request at a
  time (a lock); the server is killed with its process group when anything goes wrong and
  started again on the next scan. ``tests/integration/validation/test_resident.py`` checks
  that it finds what the one-shot scan finds on every sample of the corpus.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from sless.config import ValidationSettings
from sless.validation.report import Finding, Verdict
from sless.validation.semgrep import RULES_DIR, semgrep_env, semgrep_program

__all__ = ["MAX_BYTES", "MAX_FILES", "ResidentSemgrep"]

#: more files than this are scanned by the one-shot scan
MAX_FILES = 4
#: a file larger than this is scanned by the one-shot scan
MAX_BYTES = 256 * 1024
#: suffixes a file may have to be scanned here
SUFFIXES = (
    ".py", ".pyw", ".pyi", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx",
    ".json", ".sh", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".md",
)  # fmt: skip
#: files scanned by one server before it is started again
_RESTART_AFTER = 2000
#: how long the server may take to start and load the rules
_START_TIMEOUT_S = 30.0
#: how long one file's scan may take before the server is given up
_SCAN_TIMEOUT_S = 5.0


def _verdicts(rules_dir: Path = RULES_DIR) -> dict[str, Verdict]:
    """Each rule id's severity in a report, as ``semgrep._result_finding`` maps it."""
    out: dict[str, Verdict] = {}
    for path in sorted(rules_dir.rglob("*.yaml")):
        for rule in yaml.safe_load(path.read_text(encoding="utf-8")).get("rules", []):
            verdict = (rule.get("metadata") or {}).get("verdict")
            if verdict in ("reject", "review"):
                out[rule["id"]] = Verdict(verdict)
            elif verdict == "note":
                out[rule["id"]] = Verdict.ALLOW
            else:
                out[rule["id"]] = (
                    Verdict.REJECT if rule.get("severity") == "ERROR" else Verdict.REVIEW
                )
    return out


class _Server:
    """One ``semgrep lsp`` process speaking JSON-RPC over its stdin/stdout."""

    def __init__(self, process: asyncio.subprocess.Process, workspace: Path) -> None:
        self.process = process
        self.workspace = workspace
        self.log: list[str] = []
        self._log_changed = asyncio.Event()
        self._messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._tasks = [
            asyncio.ensure_future(self._read_messages()),
            asyncio.ensure_future(self._read_log()),
        ]
        self._next_id = 0
        #: files scanned so far (each under a name of its own)
        self.scans = 0
        # its own process group gets no signal of ours: killed at exit if still running
        self._at_exit = functools.partial(_kill_group, process.pid)
        atexit.register(self._at_exit)

    async def _read_messages(self) -> None:
        assert self.process.stdout is not None
        stdout = self.process.stdout
        while True:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            if length is None:
                return
            await self._messages.put(json.loads(await stdout.readexactly(length)))

    async def _read_log(self) -> None:
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.log.append(line.decode("utf-8", "replace").rstrip("\n"))
            self._log_changed.set()

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method: str, params: dict[str, Any]) -> int:
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    async def wait_for(self, wanted: Any, within: float) -> dict[str, Any]:
        """The next message for which ``wanted(message)`` holds (others are dropped)."""
        async with asyncio.timeout(within):
            while True:
                message = await self._messages.get()
                if wanted(message):
                    return message

    async def wait_log(self, wanted: Any, within: float) -> None:
        async with asyncio.timeout(within):
            while not wanted(self.log):
                self._log_changed.clear()
                await self._log_changed.wait()

    async def stop(self) -> None:
        """Kill the server (before any await) and wait for its exit; cancelled while it
        waits, the workspace still goes and the cancellation goes on to the caller (the
        loop reaps the killed process on its own)."""
        for task in self._tasks:
            task.cancel()
        _kill_group(self.process.pid)
        atexit.unregister(self._at_exit)
        try:
            await asyncio.shield(self.process.wait())
        finally:
            shutil.rmtree(self.workspace, ignore_errors=True)


class ResidentSemgrep:
    """``scan`` small sets of files with a long-running ``semgrep lsp``."""

    def __init__(self, settings: ValidationSettings) -> None:
        self.settings = settings
        self._server: _Server | None = None
        self._lock = asyncio.Lock()
        self._verdicts: dict[str, Verdict] | None = None
        #: scans answered here, and scans handed back to the one-shot scan
        self.answered = 0
        self.declined = 0

    async def scan(self, files: dict[str, Path]) -> list[Finding] | None:
        """Findings for ``files`` (report name -> path), or None: use the one-shot scan."""
        if not files or len(files) > MAX_FILES:
            return None
        if any(Path(name).suffix not in SUFFIXES for name in files):
            return None
        texts = await asyncio.to_thread(_texts, files)
        if texts is None:
            return None
        async with self._lock:
            try:
                findings = await self._scan(texts)
            except (OSError, ValueError, KeyError, TypeError, TimeoutError, EOFError):
                findings = None
                await self.close()
            except asyncio.IncompleteReadError:
                findings = None
                await self.close()
            except BaseException:
                await self.close()
                raise
        if findings is None:
            self.declined += 1
        else:
            self.answered += 1
        return findings

    async def close(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            await server.stop()

    async def _scan(self, texts: dict[str, str]) -> list[Finding] | None:
        server = self._server or await self._start()
        if server is None:
            return None
        if self._verdicts is None:
            self._verdicts = await asyncio.to_thread(_verdicts)
        findings: list[Finding] = []
        for name, text in texts.items():
            # a name never used before: the server caches what it read of a path (a
            # second content under the same name was reported on the first one's lines)
            server.scans += 1
            target = server.workspace / f"{server.scans}{Path(name).suffix}"
            await asyncio.to_thread(target.write_text, text, "utf-8")
            try:
                found = await self._scan_one(server, target, name, text)
            finally:
                await asyncio.to_thread(target.unlink, True)
            if found is None:
                return None
            findings.extend(found)
        if server.scans >= _RESTART_AFTER:
            await self.close()  # what it caches per path grows with every name
        return findings

    async def _scan_one(
        self, server: _Server, target: Path, name: str, text: str
    ) -> list[Finding] | None:
        assert self._verdicts is not None
        uri = target.as_uri()

        def diagnostics(m: dict[str, Any]) -> bool:
            return bool(
                m.get("method") == "textDocument/publishDiagnostics"
                and m.get("params", {}).get("uri") == uri
            )

        opened = {"textDocument": {"uri": uri, "languageId": "", "version": 1, "text": text}}
        closed = {"textDocument": {"uri": uri}}
        # The first open of a new file makes the server walk its workspace again, and
        # scan nothing (it answers with no diagnostics); the second open scans it.
        logged = len(server.log)
        server.send({"method": "textDocument/didOpen", "params": opened})
        await server.wait_for(diagnostics, _SCAN_TIMEOUT_S)
        server.send({"method": "textDocument/didClose", "params": closed})
        await server.wait_log(
            lambda log: any("No targets to scan" in line for line in log[logged:]),
            _SCAN_TIMEOUT_S,
        )
        logged = len(server.log)
        server.send({"method": "textDocument/didOpen", "params": opened})
        message = await server.wait_for(diagnostics, _SCAN_TIMEOUT_S)
        server.send({"method": "textDocument/didClose", "params": closed})
        # the log of this one scan must say: no error, no rule skipped, the file scanned
        await server.wait_log(
            lambda log: any(line.startswith("Found ") for line in log[logged:]), _SCAN_TIMEOUT_S
        )
        if not _clean_scan(server.log[logged:]):
            return None
        findings = []
        for diagnostic in message["params"]["diagnostics"]:
            rule = str(diagnostic["code"]).rsplit(".", 1)[-1]
            verdict = self._verdicts.get(rule)
            if verdict is None:
                return None  # a rule we do not know: the server loaded something else
            findings.append(
                Finding(
                    rule=rule,
                    message=" ".join(str(diagnostic.get("message", "")).split()),
                    file=name,
                    line=int(diagnostic["range"]["start"]["line"]) + 1,
                    source="static",
                    severity=verdict,
                )
            )
        return findings

    async def _start(self) -> _Server | None:
        program = semgrep_program(self.settings)
        if program is None:
            return None
        workspace = Path(tempfile.mkdtemp(prefix="sless-semgrep-ws-"))
        process = await asyncio.create_subprocess_exec(
            program,
            "lsp",
            cwd=workspace,
            env=semgrep_env(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        server = _Server(process, workspace)
        try:
            per_file_timeout = max(1, int(self.settings.semgrep_timeout_s / 4))
            request = server.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": workspace.as_uri(),
                    "workspaceFolders": [{"uri": workspace.as_uri(), "name": "sless"}],
                    "capabilities": {},
                    "initializationOptions": {
                        "scan": {
                            "configuration": [str(RULES_DIR)],
                            "exclude": [],
                            "include": [],
                            "jobs": 1,
                            "maxMemory": 0,
                            "maxTargetBytes": MAX_BYTES * 4,
                            "timeout": per_file_timeout,
                            "timeoutThreshold": 0,
                            "onlyGitDirty": False,
                            "ci": False,
                        },
                        "metrics": {"enabled": False},
                        "doHover": False,
                    },
                },
            )
            await server.wait_for(lambda m: m.get("id") == request, _START_TIMEOUT_S)
            server.send({"method": "initialized", "params": {}})
            await server.wait_for(
                lambda m: m.get("method") == "semgrep/rulesRefreshed", _START_TIMEOUT_S
            )
        except BaseException:
            await server.stop()
            raise
        self._server = server
        return server


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _texts(files: dict[str, Path]) -> dict[str, str] | None:
    """The files as text, or None when one is large or not UTF-8 (then the one-shot scan
    reads the bytes as they are)."""
    texts = {}
    for name, path in files.items():
        try:
            if path.stat().st_size > MAX_BYTES:
                return None
            texts[name] = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    return texts


def _clean_scan(log: list[str]) -> bool:
    errors = [line for line in log if line.startswith("Semgrep errors:")]
    skipped = [line for line in log if line.startswith("Semgrep skipped ")]
    scanned = [line for line in log if line.startswith("Scanned ") and line.endswith(" files")]
    if errors != ["Semgrep errors: "] or skipped != ["Semgrep skipped 0 rules"]:
        return False
    if scanned != ["Scanned 1 files"]:
        return False
    # an error message spans lines: whatever follows "Semgrep errors: " up to the next
    # summary line must be nothing
    at = log.index("Semgrep errors: ")
    return log[at + 1].startswith("Semgrep skipped ") if at + 1 < len(log) else False
