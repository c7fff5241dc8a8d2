"""sless.gateway.invocation_ids: version 4 UUIDs from a pool of random bytes."""

from __future__ import annotations

import os
import uuid

from sless.gateway.invocation_ids import new_invocation_id


def test_ids_are_random_version_4_uuids_and_never_repeat_across_refills() -> None:
    ids = [new_invocation_id() for _ in range(3 * 256 + 5)]  # three refills of the pool
    assert len(set(ids)) == len(ids)
    for value in ids:
        assert value.version == 4
        assert value.variant == uuid.RFC_4122
        assert uuid.UUID(str(value)) == value


def test_a_forked_child_does_not_reuse_its_parents_pool() -> None:
    new_invocation_id()  # the pool holds bytes the child must not use
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next id, then out without running pytest's teardown
        os.close(read)
        os.write(write, new_invocation_id().bytes)
        os._exit(0)
    os.close(write)
    child = uuid.UUID(bytes=os.read(read, 16))
    os.close(read)
    os.waitpid(pid, 0)
    assert child != new_invocation_id()
