"""Diagnostics endpoint: runtime version, CPUs, memory and uptime of the instance."""

import os
import platform
import time

_STARTED = time.time()


def _meminfo():
    info = {}
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                key, value = line.split(":", 1)
                if key in ("MemTotal", "MemAvailable"):
                    info[key] = int(value.split()[0]) // 1024
    except OSError:
        pass
    return info


def handle(event, context):
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "memory_mb": _meminfo(),
        "instance_age_s": round(time.time() - _STARTED, 1),
        "pid": os.getpid(),
    }
