"""sless.gateway.invocation_ids: version 4 UUIDs from a pool of random bytes."""

from __future__ import annotations

import os
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from sless.gateway.invocation_ids import new_invocation_id, of_bytes


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


@settings(max_examples=500, deadline=None)
@given(st.binary(min_size=16, max_size=16))
def test_an_id_of_bytes_is_uuid4s(raw: bytes) -> None:
    made, expected = of_bytes(raw), uuid.UUID(bytes=raw, version=4)
    assert made == expected
    assert (made.int, made.is_safe, made.version, made.variant) == (
        expected.int,
        expected.is_safe,
        expected.version,
        expected.variant,
    )
    assert str(made) == str(expected)
    assert hash(made) == hash(expected)
