"""The seccomp program itself: loaded into a child Python (no bubblewrap), call by call.

The child installs exactly the bytes bubblewrap is given (``seccomp.program()``) with
``prctl(PR_SET_SECCOMP)`` and reports what each call answers. x86_64 numbers are written
out: the test must not share the code (libseccomp's tables) it checks.
"""

from __future__ import annotations

import errno
import json
import platform
import socket
import subprocess
import sys
import textwrap

import pytest

from sless.sandbox import seccomp

#: refused by name in issue 26: none of these may ever join the allowlist
MUST_REFUSE = (
    "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd", "ptrace",
    "process_vm_readv", "process_vm_writev", "mount", "umount2", "fsopen", "fsmount",
    "fsconfig", "move_mount", "open_tree", "fspick", "mount_setattr", "pivot_root", "unshare",
    "setns", "clone", "clone3", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "io_uring_setup", "io_uring_enter", "io_uring_register", "personality",
    "acct", "swapon", "swapoff", "reboot", "chroot", "socket", "socketpair",
)  # fmt: skip

CHILD = textwrap.dedent(
    """
    import ctypes, json, mmap, sys

    program = sys.stdin.buffer.read()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    fprog = Fprog(len(program) // 8, program)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise SystemExit("no_new_privs: %d" % ctypes.get_errno())
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, MODE_FILTER
        raise SystemExit("seccomp: %d" % ctypes.get_errno())

    def call(number, *args):
        ctypes.set_errno(0)
        result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
        if result > 0 and number in (41, 53):  # a socket that was allowed
            libc.close(ctypes.c_int(result))
            result = 3
        return [result, ctypes.get_errno()]

    def int80(eax):
        code = bytes([0xB8]) + eax.to_bytes(4, "little") + bytes([0xCD, 0x80, 0xC3])
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=7)
        page.write(code)
        address = ctypes.addressof(ctypes.c_char.from_buffer(page))
        return ctypes.CFUNCTYPE(ctypes.c_int)(address)()

    cases = json.loads(sys.argv[1])
    found = {name: call(*numbers) for name, numbers in cases.items()}
    found["int80_getpid"] = int80(20)
    print(json.dumps(found))
    """
)

EPERM = [-1, errno.EPERM]
ENOSYS = [-1, errno.ENOSYS]
SOCK_STREAM, SOCK_DGRAM, SOCK_RAW = 1, 2, 3
NETLINK_AUDIT = 9
AF_VSOCK, AF_ALG, AF_TIPC, AF_CAN, AF_RDS, AF_PACKET = 40, 38, 30, 29, 21, 17

#: name -> (number, args...), expected answer
CASES: dict[str, tuple[tuple[int, ...], list[int] | str]] = {
    "getppid": ((110,), "ok"),
    "personality_query": ((135, 0xFFFFFFFF), "ok"),
    "personality_linux": ((135, 0), "ok"),
    "personality_no_aslr": ((135, 0x0040000), EPERM),
    "personality_read_implies_exec": ((135, 0x0400000), EPERM),
    "socket_unix": ((41, socket.AF_UNIX, SOCK_STREAM, 0), "ok"),
    "socket_inet": ((41, socket.AF_INET, SOCK_DGRAM, 0), "ok"),
    "socket_inet6": ((41, socket.AF_INET6, SOCK_STREAM, 0), "ok"),
    "socket_netlink_route": ((41, socket.AF_NETLINK, SOCK_RAW, 0), "ok"),
    "socket_netlink_audit": ((41, socket.AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), EPERM),
    "socket_packet": ((41, AF_PACKET, SOCK_RAW, 0), EPERM),
    "socket_vsock": ((41, AF_VSOCK, SOCK_STREAM, 0), EPERM),
    "socket_alg": ((41, AF_ALG, 5, 0), EPERM),
    "socket_tipc": ((41, AF_TIPC, SOCK_DGRAM, 0), EPERM),
    "socket_can": ((41, AF_CAN, SOCK_RAW, 1), EPERM),
    "socket_rds": ((41, AF_RDS, 5, 0), EPERM),
    "socketpair_unix": ((53, socket.AF_UNIX, SOCK_STREAM, 0, 0), "efault"),
    "socketpair_inet": ((53, socket.AF_INET, SOCK_STREAM, 0, 0), EPERM),
    "clone_newpid": ((56, 0x20000000 | 17, 0, 0, 0, 0), EPERM),
    "clone_newcgroup": ((56, 0x02000000 | 17, 0, 0, 0, 0), EPERM),
    "clone_newipc": ((56, 0x08000000 | 17, 0, 0, 0, 0), EPERM),
    "clone_newuts": ((56, 0x04000000 | 17, 0, 0, 0, 0), EPERM),
    "clone3": ((435, 0, 0), ENOSYS),
    "keyctl": ((250, 0, 0xFFFFFFFD, 0), EPERM),
    "bpf": ((321, 0, 0, 0), EPERM),
    "io_uring_setup": ((425, 1, 0), EPERM),
    "syslog": ((103, 3, 0, 0), EPERM),
    "modify_ldt": ((154, 0, 0, 0), EPERM),
    "open_by_handle_at": ((304, 0, 0, 0), EPERM),
    "settimeofday": ((164, 0, 0), EPERM),
    # x32: the 0x40000000 bit on an x86_64 number (getppid)
    "x32_getppid": ((0x40000000 | 110,), EPERM),
}


@pytest.fixture(scope="module")
def answers() -> dict[str, object]:
    if platform.machine() != "x86_64":
        raise RuntimeError(f"these numbers are x86_64's; this machine is {platform.machine()}")
    cases = {name: numbers for name, (numbers, _) in CASES.items()}
    # the first number after those this libseccomp knows (the kernel may know it: 6.x has
    # calls up to 470): ENOSYS from the filter, so that the C library falls back
    cases["newer_than_the_library"] = (_first_unknown_number(), 0, 0, 0)
    child = subprocess.run(
        [sys.executable, "-I", "-c", CHILD, json.dumps(cases)],
        input=seccomp.program(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    found: dict[str, object] = json.loads(child.stdout)
    return found


def _first_unknown_number() -> int:
    import pyseccomp

    def known(number: int) -> bool:
        try:
            pyseccomp.resolve_syscall(0, number)
        except ValueError:
            return False
        return True

    return max(n for n in range(512) if known(n)) + 1


def test_a_newer_call_answers_enosys(answers: dict[str, object]) -> None:
    assert answers["newer_than_the_library"] == ENOSYS


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_call_answers_as_the_filter_says(answers: dict[str, object], name: str) -> None:
    expected = CASES[name][1]
    found = answers[name]
    if expected == "ok":
        assert isinstance(found, list)
        assert found[0] >= 0, found
    elif expected == "efault":  # allowed: the kernel itself answers (a null pointer)
        assert found == [-1, errno.EFAULT]
    else:
        assert found == expected


def test_the_i386_entry_point_is_refused(answers: dict[str, object]) -> None:
    # int 0x80 getpid: -EPERM in eax instead of a pid
    assert answers["int80_getpid"] == -errno.EPERM


def test_no_refused_call_is_in_the_allowlist() -> None:
    assert not set(MUST_REFUSE) & set(seccomp.ALLOWED)


def test_every_allowed_name_is_known_to_libseccomp_here() -> None:
    import pyseccomp

    unknown = [n for n in seccomp.ALLOWED if pyseccomp.resolve_syscall(0, n) < 0]
    assert unknown == []
    assert len(set(seccomp.ALLOWED)) == len(seccomp.ALLOWED)


def test_the_program_is_compiled_once() -> None:
    assert seccomp.program() is seccomp.program()
    ok, reason = seccomp.available()
    assert ok, reason
