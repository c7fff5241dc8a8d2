"""The embedded PostgreSQL SIGKILLed while ``sless up`` runs: started again by ``sless up``.

Before, nothing noticed: the gateway answered 503 ``database_unavailable`` on every
management call until someone ran ``pg_ctl`` by hand. Now its supervisor thread sees the
dead postmaster, starts the server again on the same data directory (it still holds the
directory's lock, so no other ``sless up`` can take it meanwhile), says so in the log, and
the gateway's pool reconnects. A clean stop afterwards stops the new postmaster too.
"""

from __future__ import annotations

import fcntl
import os
import signal
from pathlib import Path

import pytest

from tests.faults.harness import Platform, postmasters, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def _lock_is_held(lock: Path) -> bool:
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also lets go of the lock, when this test got it
    return False


def test_a_killed_embedded_postgres_is_started_again(home: Path) -> None:
    platform = Platform(home / "data")
    try:
        platform.start()
        platform.tenant("before")
        first = platform.postmaster_pid()
        assert first is not None
        os.kill(first, signal.SIGKILL)

        def back() -> int | None:
            pid = platform.postmaster_pid()
            return pid if pid is not None and pid != first else None

        wait_until("the postmaster to be started again", back, 180)
        # the data directory stayed locked by this sless up the whole time
        assert _lock_is_held(platform.data_dir / "pg.lock")

        def created() -> bool:
            with platform.admin() as admin:
                return admin.post("/v1/admin/tenants", json={"name": "after"}).status_code == 201

        wait_until("the management API to work again", created, 120)
        with platform.admin() as admin:
            names = [t["tenant"] for t in admin.get("/v1/admin/tenants").json()["tenants"]]
        assert sorted(names) == ["after", "before"]
        # the supervisor logs "running again" once its restart call returns, which may be
        # a moment after the server already answers the platform's queries
        wait_until(
            "the supervisor to log the restart",
            lambda: "embedded PostgreSQL running again" in platform.log_path.read_text(),
            30,
        )
        log = platform.log_path.read_text(errors="replace")
        assert f"embedded PostgreSQL died (pid {first}); starting it again" in log, log[-3000:]

        assert platform.process is not None
        platform.process.terminate()  # a clean stop stops the new postmaster as well
        assert platform.process.wait(timeout=120) == 0
        # no postmaster left on the data directory (a zombie has no command line)
        wait_until("the restarted postmaster to exit", lambda: not postmasters(platform.pgdata), 60)
    finally:
        platform.stop()
