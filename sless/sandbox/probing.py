"""Whether this host can run the sandbox: bubblewrap, prlimit, setpriv (as root) and the
seccomp filter, probed once at start by running a trivial sandbox under the filter."""

from __future__ import annotations

import os
import shutil
import subprocess

from . import seccomp as seccomp_filter


def sandbox_available(bwrap: str = "bwrap") -> tuple[bool, str]:
    """Whether bubblewrap can create the sandbox here; the reason says how to fix it."""
    path = shutil.which(bwrap)
    if path is None:
        return False, (
            f"bubblewrap ({bwrap}) not found: install it (apt-get install bubblewrap, "
            "dnf install bubblewrap) or, on a development machine only, run without the "
            "sandbox (SLESS_SANDBOX_UNSAFE_NO_SANDBOX=true)"
        )
    if shutil.which("prlimit") is None:
        return False, "prlimit not found: install util-linux"
    try:
        filter_fd = seccomp_filter.program_fd()
    except seccomp_filter.SeccompUnavailable as e:
        return False, str(e)
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return False, "setpriv not found (workers run as their tenant's uid): install util-linux"
    probe = [
        path,
        "--seccomp",
        str(filter_fd),
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--proc",
        "/proc",
        "--",
        "/usr/bin/true",
    ]
    try:
        result = subprocess.run(
            probe, capture_output=True, timeout=10, check=False, env={}, pass_fds=(filter_fd,)
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"bubblewrap cannot run: {e}"
    finally:
        os.close(filter_fd)
    if result.returncode != 0:
        detail = result.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return False, (
            f"bubblewrap cannot create the sandbox ({detail[0][:200]}): enable unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
            "user.max_user_namespaces>0) or run the gateway as root"
        )
    return True, f"bubblewrap available at {path}"
