"""Attack: a handler makes the system calls that kernel exploits and sandbox escapes start
with (bpf, perf_event_open, keyctl, userfaultfd, ptrace, the mount API, namespaces,
io_uring, module loading, kexec, ASLR off through personality...), or goes around the
filter through the 32-bit ABIs (``int 0x80``, x32 numbers).

Every refused call must answer EPERM (clone3: ENOSYS, so that the C library falls back to
clone, which is filtered on its flags) and leave the worker serving. The tenant deploys
through the API, so the first call meets a pre-started worker; the import-time check
(``check_handler``) and a directly started worker are attacked too, and a Node.js worker.
The x86_64 numbers are written out here, not taken from libseccomp: the test must not
share the code it checks.
"""

from __future__ import annotations

import errno
import json
import platform
import textwrap
from pathlib import Path

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.integration.sandbox.harness import (
    launch,
    make_spec,
    require_sandbox,
)
from tests.integration.sandbox.harness import request as call
from tests.support import deploy

pytestmark = pytest.mark.integration

#: x86_64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl) -> arguments
REFUSED: dict[str, tuple[int, tuple[int, ...]]] = {
    "ptrace": (101, (16, 1)),  # PTRACE_ATTACH to pid 1
    "personality": (135, (0x0040000,)),  # ADDR_NO_RANDOMIZE: ASLR off
    "pivot_root": (155, (0, 0)),
    "acct": (163, (0,)),
    "mount": (165, (0, 0, 0, 0, 0)),
    "umount2": (166, (0, 0)),
    "swapon": (167, (0, 0)),
    "swapoff": (168, (0,)),
    "reboot": (169, (0, 0, 0, 0)),
    "init_module": (175, (0, 0, 0)),
    "delete_module": (176, (0, 0)),
    "kexec_load": (246, (0, 0, 0, 0)),
    "add_key": (248, (0, 0, 0, 0, 0)),
    "request_key": (249, (0, 0, 0, 0)),
    "keyctl": (250, (0, 0xFFFFFFFD, 0)),  # KEYCTL_GET_KEYRING_ID of the session keyring
    "unshare": (272, (0x40000000,)),  # CLONE_NEWNET
    "perf_event_open": (298, (0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0)),
    "setns": (308, (0, 0)),
    "process_vm_readv": (310, (1, 0, 0, 0, 0, 0)),
    "process_vm_writev": (311, (1, 0, 0, 0, 0, 0)),
    "finit_module": (313, (0, 0, 0)),
    "kexec_file_load": (320, (0, 0, 0, 0, 0)),
    "bpf": (321, (0, 0, 0)),
    "userfaultfd": (323, (0,)),
    "io_uring_setup": (425, (1, 0)),
    "io_uring_enter": (426, (0, 0, 0, 0, 0, 0)),
    "io_uring_register": (427, (0, 0, 0, 0)),
    "open_tree": (428, (0xFFFFFF9C, 0, 0)),
    "move_mount": (429, (0, 0, 0, 0, 0)),
    "fsopen": (430, (0, 0)),
    "fsconfig": (431, (0, 0, 0, 0, 0)),
    "fsmount": (432, (0, 0, 0)),
    "fspick": (433, (0, 0, 0)),
    "mount_setattr": (442, (0, 0, 0, 0, 0)),
    # clone with a namespace flag; SIGCHLD so that, were it let through, it is a fork
    "clone_newuser": (56, (0x10000000 | 17, 0, 0, 0, 0)),
    "clone_newnet": (56, (0x40000000 | 17, 0, 0, 0, 0)),
    "clone_newns": (56, (0x00020000 | 17, 0, 0, 0, 0)),
    # x32 ABI: getpid (39) with the x32 bit, must not reach the kernel's x32 table
    "x32_getpid": (0x40000000 | 39, ()),
}

#: the handler's attack: every call of REFUSED (made raw, through libc's syscall()), the
#: 32-bit ABI through ``int 0x80``, clone3, and what must keep working
ATTACK_PY = textwrap.dedent(
    """
    import asyncio, ctypes, json, mmap, os, socket, subprocess, threading

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long


    def raw(number, args):
        ctypes.set_errno(0)
        result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
        if result == 0 and number == 56:
            os._exit(0)  # a clone that got through: the child leaves at once
        return [result, ctypes.get_errno()]


    def int80_getpid():
        # mov eax, 20 (i386 getpid); int 0x80; ret: the 32-bit entry of a 64-bit process
        code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])
        prot = mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=prot)
        page.write(code)
        address = ctypes.addressof(ctypes.c_char.from_buffer(page))
        return ctypes.CFUNCTYPE(ctypes.c_int)(address)()


    async def echo_over_loopback():
        async def serve(reader, writer):
            writer.write(await reader.read(100))
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"ping")
        await writer.drain()
        answer = await reader.read(100)
        writer.close()
        server.close()
        return answer.decode()


    def forked():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        return os.waitpid(pid, 0)[1] == 0


    def still_works():
        box = []
        thread = threading.Thread(target=lambda: box.append(threading.get_native_id()))
        thread.start()
        thread.join()
        child = subprocess.run(["/bin/sh", "-c", "echo $$"], capture_output=True, check=True)
        left, right = socket.socketpair()
        left.sendall(b"pair")
        return {
            "thread": bool(box),
            "subprocess": child.stdout.strip().isdigit(),
            "fork": forked(),
            "asyncio": asyncio.run(echo_over_loopback()),
            "socketpair": right.recv(10).decode(),
        }


    def attack(calls):
        result = {name: raw(number, args) for name, (number, args) in calls.items()}
        result["clone3"] = raw(435, (0, 0))
        result["int80_getpid"] = int80_getpid()
        result["seccomp_mode"] = [
            line.split()[1] for line in open("/proc/self/status") if line.startswith("Seccomp:")
        ][0]
        result["works"] = still_works()
        return result
    """
)

HANDLER_PY = ATTACK_PY + textwrap.dedent(
    """

    def handle(event, context):
        if event["body"].get("calls") is None:
            return "still alive"
        return attack(event["body"]["calls"])
    """
)

#: at import (so also in the deploy-time check): refuse to load if any call got through
CHECKED_AT_IMPORT_PY = ATTACK_PY + textwrap.dedent(
    """
    CALLS = json.loads(open(os.path.join(os.path.dirname(__file__), "calls.json")).read())
    FOUND = attack(CALLS)
    LEAKED = [k for k, v in FOUND.items() if isinstance(v, list) and v[0] != -1]
    if LEAKED:
        raise ImportError(f"system calls got through the sandbox: {LEAKED}")


    def handle(event, context):
        return FOUND
    """
)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # the static rules hold this code as written (raw ctypes calls, executable memory);
    # an attacker hides it from them, and what is under test is what the sandbox lets
    # through once the code runs
    settings.validation.static_enabled = False
    settings.validation.detonation_enabled = False  # the attack must run to be contained
    return settings


def _calls() -> dict[str, list[object]]:
    if platform.machine() != "x86_64":
        raise RuntimeError(f"these numbers are x86_64's; this machine is {platform.machine()}")
    return {name: [number, list(args)] for name, (number, args) in REFUSED.items()}


def assert_refused(found: dict[str, object]) -> None:
    eperm = [-1, errno.EPERM]
    outcome = {name: found[name] for name in REFUSED}
    assert outcome == {name: eperm for name in REFUSED}
    # ENOSYS, not EPERM: glibc and libuv then fall back to clone(), filtered on its flags
    assert found["clone3"] == [-1, errno.ENOSYS]
    # the i386 entry point answers -EPERM in eax (getpid would be a positive pid)
    assert found["int80_getpid"] == -errno.EPERM
    assert found["seccomp_mode"] == "2"  # SECCOMP_MODE_FILTER
    assert found["works"] == {
        "thread": True,
        "subprocess": True,
        "fork": True,
        "asyncio": "ping",
        "socketpair": "pair",
    }


def _host_filter_only(isolation: str, request: pytest.FixtureRequest) -> None:
    """This filter is bubblewrap's: under gVisor it is not installed (tenant calls reach
    the Sentry, never the host kernel), and the Sentry answers some of these calls with
    other errnos than EPERM, or (io_uring, seccomp mode) differently."""
    if isolation == "gvisor":
        request.applymarker(
            pytest.mark.xfail(strict=True, reason="the host seccomp filter is bubblewrap's")
        )


def test_refused_calls_through_the_api_leave_the_worker_serving(
    gateway: RunningGateway, isolation: str, request: pytest.FixtureRequest
) -> None:
    _host_filter_only(isolation, request)
    tenant = gateway.tenant("sec")
    function = deploy(tenant, "sless-sec", "escape", {"handler.py": HANDLER_PY})
    assert function["status"]["phase"] == "Ready", function["status"]
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    assert backend.prestart is not None
    before = backend.prestart.handed_out
    calls = httpx.Client(base_url=gateway.url, timeout=60)
    response = calls.post("/fn/sless-sec/escape", json={"calls": _calls()})
    assert response.status_code == 200, response.text
    # the first call met a pre-started generic worker, specialized for this function
    assert backend.prestart.handed_out == before + 1
    assert_refused(response.json())
    # the worker was not killed by any of it: the same worker answers the next call
    again = calls.post("/fn/sless-sec/escape", json={})
    assert (again.status_code, again.json()) == (200, "still alive")
    calls.close()


def test_refused_calls_at_import_time_and_in_the_deploy_check(
    gateway: RunningGateway, isolation: str, request: pytest.FixtureRequest
) -> None:
    _host_filter_only(isolation, request)
    tenant = gateway.tenant("imp")
    files = {"handler.py": CHECKED_AT_IMPORT_PY, "calls.json": json.dumps(_calls())}
    function = deploy(tenant, "sless-imp", "escape", files)
    # the deploy-time check imports the handler in the sandbox: a call that got through
    # raises ImportError there and the function fails
    assert function["status"]["phase"] == "Ready", function["status"]
    response = httpx.post(f"{gateway.url}/fn/sless-imp/escape", json={}, timeout=60)
    assert response.status_code == 200, response.text
    assert_refused(response.json())


async def test_refused_calls_in_a_directly_started_worker(
    tmp_path: Path, isolation: str, request: pytest.FixtureRequest
) -> None:
    _host_filter_only(isolation, request)
    require_sandbox()
    code = tmp_path / "code"
    code.mkdir()
    (code / "handler.py").write_text(HANDLER_PY)
    # start_worker itself, not the pre-started pool
    worker = await launch(make_spec(tmp_path))
    try:
        status, found = await call(worker, "POST", "/", body={"calls": _calls()})
        assert status == 200, found
        assert_refused(found)
        assert await call(worker, "POST", "/", body={}) == (200, "still alive")
    finally:
        await worker.stop()


NODE_ATTACK = """
return (async () => {
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const status = fs.readFileSync('/proc/self/status', 'utf8');
const seccomp = status.split('\\n').find((l) => l.startsWith('Seccomp:')).split(/\\s+/)[1];
// a child of the Node worker makes the raw calls: the filter is inherited by every process
const script = `
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
for name, (number, args) in json.loads(sys.argv[1]).items():
    ctypes.set_errno(0)
    out[name] = [libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args)),
                 ctypes.get_errno()]
print(json.dumps(out))
`;
const raw = JSON.parse(execFileSync('/usr/bin/python3', ['-I', '-c', script,
  JSON.stringify(event.body.calls)]).toString());
// file reads through libuv's thread pool (and io_uring, were it allowed)
const own = await fs.promises.readFile(path.join(process.cwd(), 'handler.js'), 'utf8');
const tmp = path.join(os.tmpdir(), 'seccomp-probe.txt');
await fs.promises.writeFile(tmp, 'written');
const back = await fs.promises.readFile(tmp, 'utf8');
// a local socket call
const sock = path.join(os.tmpdir(), 'echo.sock');
const server = net.createServer((c) => c.on('data', (d) => { c.end(d); }));
await new Promise((resolve) => server.listen(sock, resolve));
const echoed = await new Promise((resolve, reject) => {
  const c = net.connect(sock, () => c.write('ping'));
  let got = '';
  c.on('data', (d) => { got += d; });
  c.on('end', () => resolve(got));
  c.on('error', reject);
});
server.close();
return { seccomp, raw, read: own.includes('exports.handle'), back, echoed };
})();
"""


async def test_refused_calls_in_a_node_worker(
    tmp_path: Path, isolation: str, request: pytest.FixtureRequest
) -> None:
    _host_filter_only(isolation, request)
    require_sandbox()
    # libuv tries io_uring for file I/O when asked (UV_USE_IO_URING=1): it must fall back
    spec = make_spec(tmp_path, runtime="nodejs20", env={"UV_USE_IO_URING": "1"})
    worker = await launch(spec)
    names = ["bpf", "perf_event_open", "keyctl", "add_key", "userfaultfd", "io_uring_setup"]
    calls = {name: value for name, value in _calls().items() if name in names}
    try:
        status, data = await call(
            worker, "POST", "/", body={"code": NODE_ATTACK, "calls": calls}, timeout_s=60
        )
        assert status == 200, data
        found = data["result"]
        assert found["seccomp"] == "2"
        assert found["raw"] == {name: [-1, errno.EPERM] for name in names}
        assert (found["read"], found["back"], found["echoed"]) == (True, "written", "ping")
        # the worker is still serving
        status, again = await call(
            worker, "POST", "/", body={"code": "return 'alive';"}, timeout_s=30
        )
        assert (status, again) == (200, {"result": "alive"})
    finally:
        await worker.stop()
