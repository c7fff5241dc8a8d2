"""Counts shared by gateway processes: a limit holds for the sum of real processes racing
for it (spawned interpreters, each with its own memory)."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from sless.backends.local.sharing import SharedCounts

LIMIT = 3
ROUNDS = 20_000


def _race(
    counts: SharedCounts, start: Barrier, results: multiprocessing.Queue[tuple[int, int]]
) -> None:
    """Take a slot of the limit, look at the sum, give it back; report the highest sum
    seen and the takes that succeeded. All start at once (the barrier)."""
    highest = taken = 0
    start.wait()
    for _ in range(ROUNDS):
        if counts.take(0, LIMIT):
            taken += 1
            highest = max(highest, counts.value(0))
            counts.value(1)  # a little time held
            counts.give(0)
    results.put((highest, taken))


def test_a_limit_holds_across_processes_racing_for_it(tmp_path: Path) -> None:
    counts = SharedCounts.create(tmp_path / "counts", slots=2)
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue[tuple[int, int]] = context.Queue()
    start = context.Barrier(4)
    processes = [context.Process(target=_race, args=(counts, start, results)) for _ in range(4)]
    for process in processes:
        process.start()
    seen = [results.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert max(highest for highest, _ in seen) <= LIMIT
    assert all(taken > 0 for _, taken in seen)
    assert counts.value(0) == 0
    counts.close()


def test_a_full_slot_refuses_and_a_give_makes_room(tmp_path: Path) -> None:
    counts = SharedCounts.create(tmp_path / "counts", slots=1)
    assert [counts.take(0, 2) for _ in range(3)] == [True, True, False]
    counts.give(0)
    assert counts.take(0, 2)
    counts.reset(0)
    counts.give(0)
    assert counts.value(0) == 0  # never below zero
    with pytest.raises(IndexError):
        counts.take(1, 2)
    assert (tmp_path / "counts").stat().st_mode & 0o777 == 0o600
    counts.close()
