"""The seccomp filter of every sandboxed worker: an allowlist, compiled once per process.

Modelled on containerd's default profile (``contrib/seccomp/seccomp_default.go``): the
system calls a process without capabilities needs are allowed, everything else answers
``EPERM`` and the process goes on (the default action is ``ERRNO(EPERM)``, never a kill:
a handler that probes is told no, the worker keeps serving). Written as our own list for
x86_64 and the two runtimes we run (Python 3.11, Node.js 20), and narrower than
containerd's where they need less:

- refused, as in containerd: the kernel's most attacked interfaces that a function never
  needs: ``bpf``, ``perf_event_open``, ``userfaultfd`` (the usual race-widening step of
  kernel exploits), the key store (``keyctl``, ``add_key``, ``request_key``), ``ptrace``
  and ``process_vm_readv``/``writev``, the whole mount API (``mount``, ``umount2``,
  ``fsopen``, ``fsconfig``, ``fsmount``, ``fspick``, ``move_mount``, ``open_tree``,
  ``mount_setattr``), ``pivot_root``, ``chroot``, ``unshare``, ``setns``, ``clone`` with
  any ``CLONE_NEW*`` flag (checked on its flags argument, as containerd does), module
  loading, ``kexec_*``, ``acct``, ``swapon``/``swapoff``, ``reboot``, clock setting,
  ``name_to_handle_at``/``open_by_handle_at`` (the "shocker" escape), and ``personality``
  except containerd's values (``0``, ``0x8``, ``0x20000``, ``0x20008``, and ``0xffffffff``
  which only queries), so that ASLR cannot be turned off;
- refused although containerd allows them: ``io_uring_*`` (a large share of recent kernel
  CVEs; Google disabled it on ChromeOS, Android and its servers; libuv falls back to its
  thread pool), ``syslog``, ``modify_ldt``, ``kcmp``, ``pidfd_getfd``, ``fanotify_mark``,
  and sockets of any family but ``AF_UNIX``, ``AF_INET``, ``AF_INET6`` and
  ``AF_NETLINK``/``NETLINK_ROUTE`` (what getaddrinfo and getifaddrs use): AF_TIPC, AF_CAN,
  AF_VSOCK, AF_RDS, AF_ALG... are reachable without a capability and each had its own
  kernel exploit (CVE-2021-43267, CVE-2021-3609, CVE-2021-26708, CVE-2010-3904);
- ``clone3`` answers ``ENOSYS``, not ``EPERM``: its flags live in memory a filter cannot
  read, and ``ENOSYS`` makes glibc and libuv fall back to ``clone``, whose flags it can;
- numbers above the highest this libseccomp knows answer ``ENOSYS`` too (what runc does):
  a newer C library then falls back to the older call, which the list decides on.

Architecture: the filter is for the native architecture only and every other one gets
``EPERM`` (libseccomp's "bad architecture" action): a 32-bit call through ``int 0x80``
(i386) and an x32 call (number ORed with ``0x40000000``) never reach their kernel tables,
which would otherwise bypass rules written for x86_64 numbers.

The compiled BPF program is handed to bubblewrap (``--seccomp FD``), which installs it
with ``no_new_privs`` right before it executes the worker's first program: the runtime,
its threads and every process it starts run under it, and no process can remove it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import socket
from typing import Any

#: allowed whatever their arguments (x86_64 names; containerd's list, minus what the
#: module docstring says, plus the calls added to the kernel since that Python, Node.js
#: and glibc use: rseq, close_range, pidfd_open, epoll_pwait2, faccessat2, ...)
ALLOWED: tuple[str, ...] = (
    # files and directories
    "access", "chdir", "chmod", "chown", "close", "close_range", "copy_file_range", "creat",
    "dup", "dup2", "dup3", "faccessat", "faccessat2", "fadvise64", "fallocate", "fchdir",
    "fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr",
    "flistxattr", "flock", "fremovexattr", "fsetxattr", "fstat", "fstatfs", "fsync",
    "ftruncate", "futimesat", "getcwd", "getdents", "getdents64", "getxattr",
    "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch", "lchown",
    "lgetxattr", "link", "linkat", "listxattr", "llistxattr", "lremovexattr", "lseek",
    "lsetxattr", "lstat", "mkdir", "mkdirat", "mknod", "mknodat", "newfstatat", "open",
    "openat", "openat2", "pread64", "preadv", "preadv2", "pwrite64", "pwritev", "pwritev2",
    "read", "readahead", "readlink", "readlinkat", "readv", "removexattr", "rename",
    "renameat", "renameat2", "rmdir", "sendfile", "setxattr", "splice", "stat", "statfs",
    "statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "tee", "truncate",
    "umask", "unlink", "unlinkat", "utime", "utimensat", "utimes", "vmsplice", "write",
    "writev",
    # asynchronous I/O of the old kind (not io_uring)
    "io_cancel", "io_destroy", "io_getevents", "io_pgetevents", "io_setup", "io_submit",
    # waiting and events
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait",
    "epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2", "futex",
    "futex_requeue", "futex_wait", "futex_waitv", "futex_wake", "pause", "pipe", "pipe2",
    "poll", "ppoll", "pselect6", "select", "signalfd", "signalfd4", "timerfd_create",
    "timerfd_gettime", "timerfd_settime",
    # memory
    "brk", "madvise", "membarrier", "memfd_create", "mincore", "mlock", "mlock2", "mlockall",
    "mmap", "mprotect", "mremap", "msync", "munlock", "munlockall", "munmap",
    "pkey_alloc", "pkey_free", "pkey_mprotect", "remap_file_pages",
    # processes and threads (clone is allowed below, on its flags)
    "arch_prctl", "execve", "execveat", "exit", "exit_group", "fork", "get_robust_list",
    "get_thread_area", "getcpu", "getpgid", "getpgrp", "getpid", "getppid", "getpriority",
    "getrlimit", "getrusage", "getsid", "gettid", "ioprio_get", "ioprio_set", "kill",
    "pidfd_open", "pidfd_send_signal", "prctl", "prlimit64", "restart_syscall", "rseq",
    "sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity", "sched_getattr",
    "sched_getparam", "sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
    "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield", "set_robust_list",
    "set_thread_area", "set_tid_address", "setpgid", "setpriority", "setrlimit", "setsid",
    "tgkill", "tkill", "vfork", "wait4", "waitid",
    # landlock and seccomp: a process may only confine itself further
    "landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self", "seccomp",
    # credentials: without capabilities only among the sandbox's own ids
    "capget", "capset", "getegid", "geteuid", "getgid", "getgroups", "getresgid",
    "getresuid", "getuid", "setfsgid", "setfsuid", "setgid", "setgroups", "setregid",
    "setresgid", "setresuid", "setreuid", "setuid",
    # signals
    "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn",
    "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo", "sigaltstack",
    # time (reading it; setting clocks is refused)
    "alarm", "clock_getres", "clock_gettime", "clock_nanosleep", "getitimer", "gettimeofday",
    "nanosleep", "setitimer", "time", "timer_create", "timer_delete", "timer_getoverrun",
    "timer_gettime", "timer_settime", "times",
    # sockets (socket and socketpair are allowed below, on their family)
    "accept", "accept4", "bind", "connect", "getpeername", "getsockname", "getsockopt",
    "listen", "recvfrom", "recvmmsg", "recvmsg", "sendmmsg", "sendmsg", "sendto",
    "setsockopt", "shutdown",
    # System V and POSIX IPC (private to the sandbox's ipc namespace)
    "mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink",
    "msgctl", "msgget", "msgrcv", "msgsnd", "semctl", "semget", "semop", "semtimedop",
    "shmat", "shmctl", "shmdt", "shmget",
    # the rest
    "getrandom", "ioctl", "sysinfo", "uname",
)  # fmt: skip

#: ``personality`` values allowed (containerd's): PER_LINUX, UNAME26, PER_LINUX32,
#: UNAME26|PER_LINUX32, and 0xffffffff, which only reads the current persona
PERSONALITIES: tuple[int, ...] = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

#: CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
#: CLONE_NEWNET: a clone with any of them is refused (containerd's mask)
CLONE_NAMESPACE_FLAGS = 0x7E020000

#: socket families allowed with any protocol; AF_NETLINK only with NETLINK_ROUTE (0)
SOCKET_FAMILIES: tuple[int, ...] = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)
NETLINK_ROUTE = 0

#: refused with ENOSYS so that the caller falls back to a call the filter can inspect
FALL_BACK: tuple[str, ...] = ("clone3",)

#: x86_64 numbers end below 512 (512 and up are the x32 table, refused by architecture)
_LAST_NATIVE_NUMBER = 511


class SeccompUnavailable(Exception):
    """libseccomp cannot be loaded or cannot compile the filter: no sandbox may start."""


@functools.cache
def program() -> bytes:
    """The filter as a BPF program for ``bwrap --seccomp`` (compiled once per process).

    Raises ``SeccompUnavailable`` (one line, with what to install) when libseccomp is
    missing or refuses a rule."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as e:
        raise SeccompUnavailable(
            f"libseccomp cannot be loaded ({e}): install it (apt-get install libseccomp2, "
            "dnf install libseccomp); the sandbox does not start without its seccomp filter"
        ) from None
    try:
        return _compile(pyseccomp)
    except (OSError, ValueError) as e:
        raise SeccompUnavailable(f"libseccomp could not compile the filter: {e}") from None


def available() -> tuple[bool, str]:
    """Whether the filter compiles here; the reason says how to fix it."""
    try:
        size = len(program())
    except SeccompUnavailable as e:
        return False, str(e)
    return True, f"seccomp filter of {size // 8} instructions"


def program_fd() -> int:
    """A new memfd holding the program, at offset 0, close-on-exec (``pass_fds`` hands it
    to bubblewrap, which reads it); the caller closes it."""
    data = program()
    fd = os.memfd_create("sless-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _compile(sc: Any) -> bytes:
    """Build the filter with pyseccomp (``sc``: loaded only when the filter is needed)."""
    eperm, enosys, allow = sc.ERRNO(errno.EPERM), sc.ERRNO(errno.ENOSYS), sc.ALLOW
    rules = sc.SyscallFilter(eperm)
    rules.set_attr(sc.Attr.ACT_BADARCH, eperm)
    # a binary tree of the numbers instead of a linear list: fewer instructions run per
    # system call (libseccomp >= 2.5; older ones keep the list)
    with contextlib.suppress(OSError):
        rules.set_attr(sc.Attr.CTL_OPTIMIZE, 2)
    for name in ALLOWED:
        # a name this libseccomp does not know stays refused
        if sc.resolve_syscall(sc.Arch.NATIVE, name) != _UNKNOWN:
            rules.add_rule(allow, name)
    for value in PERSONALITIES:
        rules.add_rule(allow, "personality", sc.Arg(0, sc.EQ, value))
    rules.add_rule(allow, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_NAMESPACE_FLAGS, 0))
    for family in SOCKET_FAMILIES:
        rules.add_rule(allow, "socket", sc.Arg(0, sc.EQ, family))
    netlink = sc.Arg(0, sc.EQ, socket.AF_NETLINK)
    rules.add_rule(allow, "socket", netlink, sc.Arg(2, sc.EQ, NETLINK_ROUTE))
    rules.add_rule(allow, "socketpair", sc.Arg(0, sc.EQ, socket.AF_UNIX))
    for name in FALL_BACK:
        rules.add_rule(enosys, name)
    for number in _newer_numbers(sc):
        rules.add_rule(enosys, number)
    return _export(rules)


#: what libseccomp answers for a name it does not know (__NR_SCMP_ERROR)
_UNKNOWN = -1


def _newer_numbers(sc: Any) -> range:
    """Native numbers after the last one this libseccomp knows: newer system calls."""

    def known(number: int) -> bool:
        try:
            sc.resolve_syscall(sc.Arch.NATIVE, number)
        except ValueError:
            return False
        return True

    last = max(n for n in range(_LAST_NATIVE_NUMBER + 1) if known(n))
    return range(last + 1, _LAST_NATIVE_NUMBER + 1)


def _export(rules: Any) -> bytes:
    fd = os.memfd_create("sless-seccomp-export", os.MFD_CLOEXEC)
    try:
        with os.fdopen(os.dup(fd), "wb") as out:
            rules.export_bpf(out)
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)
