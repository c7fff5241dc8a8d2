"""Each tenant's own unprivileged host uid and gid (embedded mode).

The platform owns a range of host ids, like an ``/etc/subuid`` entry:
``SLESS_SANDBOX_UID_BASE`` and ``SLESS_SANDBOX_UID_COUNT``. A namespace gets the next free
slot of the range the first time one of its workers starts, stored in PostgreSQL
(``sandbox_uids``), so the mapping is the same after a restart and in every gateway
process, and no two namespaces share one (a unique slot, never a hash). Slots are never
reused. Its workers run as ``uid = gid = base + slot``: a sandbox escape is that uid, which
owns nothing of the platform's and nothing of another tenant's.

At start the range is checked against ``/etc/subuid``, ``/etc/subgid`` and the host's
users and groups: an overlap would hand a tenant the files or the subordinate ids of
someone else, so the gateway refuses to start.
"""

from __future__ import annotations

import grp
import os
import pwd
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from sless.config import SandboxSettings
from sless.sandbox import HostIds

SUBID_FILES = (Path("/etc/subuid"), Path("/etc/subgid"))


class UidRangeError(Exception):
    """The configured range is unusable or exhausted (one line, for the operator)."""


@dataclass(frozen=True)
class UidRange:
    base: int
    count: int

    @classmethod
    def of(cls, settings: SandboxSettings) -> UidRange:
        return cls(settings.uid_base, settings.uid_count)

    def ids(self, slot: int) -> HostIds:
        if not 0 <= slot < self.count:
            raise UidRangeError(
                f"the sandbox uid range is exhausted ({self.count} namespaces): raise "
                "SLESS_SANDBOX_UID_COUNT"
            )
        return HostIds(uid=self.base + slot, gid=self.base + slot)

    def overlaps(self, start: int, count: int) -> bool:
        return start < self.base + self.count and self.base < start + count

    def check_host(self, subid_files: tuple[Path, ...] = SUBID_FILES) -> None:
        """Raise ``UidRangeError`` if the range overlaps a subordinate range or a host
        user or group."""
        for path in subid_files:
            for owner, start, count in _subid_ranges(path):
                if self.overlaps(start, count):
                    raise UidRangeError(
                        f"SLESS_SANDBOX_UID_BASE..+COUNT ({self.base}+{self.count}) overlaps "
                        f"{path} ({owner}:{start}:{count}): choose another SLESS_SANDBOX_UID_BASE"
                    )
        for kind, ids in (
            ("user", ((p.pw_name, p.pw_uid) for p in pwd.getpwall())),
            ("group", ((g.gr_name, g.gr_gid) for g in grp.getgrall())),
        ):
            for name, number in ids:
                if self.overlaps(number, 1):
                    raise UidRangeError(
                        f"SLESS_SANDBOX_UID_BASE..+COUNT ({self.base}+{self.count}) contains "
                        f"the host {kind} {name} ({number}): choose another SLESS_SANDBOX_UID_BASE"
                    )


def _subid_ranges(path: Path) -> list[tuple[str, int, int]]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    ranges = []
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            ranges.append((parts[0], int(parts[1]), int(parts[2])))
    return ranges


def can_switch_uid() -> bool:
    """Whether this process may start workers as other uids (it is root)."""
    return os.geteuid() == 0


class SandboxUids:
    """namespace → its ``HostIds``: allocated once in PostgreSQL, cached in memory."""

    def __init__(self, pool: asyncpg.Pool, uid_range: UidRange) -> None:
        self.pool = pool
        self.range = uid_range
        self._known: dict[str, HostIds] = {}

    def cached(self, namespace: str) -> HostIds | None:
        return self._known.get(namespace)

    async def ids(self, namespace: str) -> HostIds:
        known = self._known.get(namespace)
        if known is not None:
            return known
        async with self.pool.acquire() as conn, conn.transaction():
            # one allocation at a time across gateway processes: the next slot is the
            # highest given plus one, never one given before
            await conn.execute("LOCK TABLE sandbox_uids IN SHARE ROW EXCLUSIVE MODE")
            slot = await conn.fetchval(
                "SELECT slot FROM sandbox_uids WHERE namespace = $1", namespace
            )
            if slot is None:
                slot = await conn.fetchval(
                    "INSERT INTO sandbox_uids (namespace, slot)"
                    " SELECT $1, COALESCE(MAX(slot) + 1, 0) FROM sandbox_uids RETURNING slot",
                    namespace,
                )
        ids = self.range.ids(int(slot))
        self._known[namespace] = ids
        return ids


def make_private(data_dir: Path) -> None:
    """No tenant uid may list the data dir nor enter what it holds for the gateway (builds,
    logs, blobs): workers read their code through their views, their logs through fds.
    Searchable only: embedded PostgreSQL's own uid reaches ``pg`` by name."""
    data_dir.mkdir(parents=True, exist_ok=True)
    data_dir.chmod(0o711)
    for name in ("builds", "logs"):
        (data_dir / name).mkdir(exist_ok=True)
        (data_dir / name).chmod(0o700)
    blobs = data_dir / "blobs"  # only with local blobs (not S3); the blob store makes it 0700
    if blobs.exists():
        blobs.chmod(0o700)
