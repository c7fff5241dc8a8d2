"""Faults under load, on a real ``sless up``: what is promised holds (docs/RELIABILITY.md).

The scenarios live in ``scenarios.py``; ``bench/faults.py`` runs the same ones and prints
their figures. Here only correctness is asserted (records lost, calls lost or run twice,
recovery), never a duration.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.faults import scenarios

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]


def _require_root() -> None:
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.fail("the fault suite needs root (tmpfs, pg_ctl as pgserver) and bubblewrap")


def test_sigkill_of_sless_up_loses_no_record_and_no_async_call(fault_dir: Path) -> None:
    _require_root()
    result = scenarios.platform_sigkill(fault_dir)
    print(result.figures.row())  # shown with -s; bench/faults.py prints the table
    facts = result.facts
    assert facts["answered"] > 0
    # every answered call has its record after the restart (the journal replayed)
    assert facts["lost"] == set(), result.figures.note
    # every accepted asynchronous call ran once, or (in flight at the kill) is interrupted:
    # never run again, and recorded with its invocation record either way
    states, records = facts["async_states"], facts["async_records"]
    assert all(state in ("succeeded", "interrupted") for state, _ in states.values())
    # (attempts: a crash adds none, but a 5xx of the loaded machine is retried by design;
    # exactly-once under a kill is held by tests/e2e/test_crash_exactly_once.py)
    assert all(attempts >= 1 for _, attempts in states.values()), states
    assert set(records) == set(states)
    for call, (state, _) in states.items():
        assert (records[call] == "interrupted") == (state == "interrupted"), (call, state)
    # each cron tick is claimed once, run under one invocation id, and every tick due
    # ended (fired once, or interrupted), none left open
    ticks = [t["tick"] for t in facts["ticks"]]
    assert len(ticks) == len(set(ticks))
    assert len(facts["tick_ids"]) == len(set(facts["tick_ids"]))
    assert all(t["state"] in ("finished", "interrupted") for t in facts["ticks"]), facts["ticks"]
    for t in facts["ticks"]:
        assert (facts["cron_records"][t["id"]] == "interrupted") == (t["state"] == "interrupted")


@pytest.mark.parametrize("kill", [False, True], ids=["restart", "sigkill"])
def test_postgres_outage_loses_no_record_and_the_gateway_reconnects(
    fault_dir: Path, kill: bool
) -> None:
    _require_root()
    result = scenarios.postgres_outage(fault_dir, kill=kill)
    print(result.figures.row())  # shown with -s; bench/faults.py prints the table
    facts = result.facts
    assert facts["answered"] > 0
    assert facts["lost"] == set(), result.figures.note
    assert facts["dropped"] == 0
    # invocations of public functions never need the database
    assert facts["invoke_failed"] == 0, facts["first_failures"]
    assert all(state == "succeeded" for state, _ in facts["async_states"].values())
    assert facts["healthy"]
    assert facts["listed"] == 200


def test_s3_unreachable_during_an_upload(fault_dir: Path) -> None:
    _require_root()
    result = scenarios.s3_unreachable(fault_dir)
    print(result.figures.row())  # shown with -s; bench/faults.py prints the table
    facts = result.facts
    refused = facts["refused"]
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "storage_unavailable"
    # no half-written function: the spec still points at the code that serves
    before, during = facts["before"]["status"], facts["during"]["status"]
    assert during["phase"] == "Ready"
    assert during["observed_sha256"] == before["observed_sha256"]
    assert facts["invoke_failed"] == 0, result.figures.note
    # retried once the store is back: accepted, and the new version serves
    assert facts["retried"].status_code == 202, facts["retried"].text
    assert facts["served_v2"] == "v2"


def test_disk_full_refuses_uploads_and_keeps_serving(fault_dir: Path) -> None:
    _require_root()
    result = scenarios.disk_full(fault_dir)
    print(result.figures.row())  # shown with -s; bench/faults.py prints the table
    facts = result.facts
    refused = facts["refused"]
    assert refused.status_code == 507, refused.text
    assert refused.json()["error"]["code"] == "insufficient_storage"
    before, during = facts["before"]["status"], facts["during"]["status"]
    assert during["phase"] == "Ready"
    assert during["observed_sha256"] == before["observed_sha256"]
    assert facts["invoke_failed"] == 0, result.figures.note
    assert facts["lost"] == set(), result.figures.note
    assert facts["served"] == "v2"


def test_a_crash_storm_in_one_tenant_leaves_the_others_served(fault_dir: Path) -> None:
    _require_root()
    result = scenarios.crash_storm(fault_dir)
    print(result.figures.row())  # shown with -s; bench/faults.py prints the table
    facts = result.facts
    assert facts["other_calls"] > 0
    assert facts["other_failed"] == 0, result.figures.note
    # the storm really crashed workers (5xx answers), and the function recovered
    assert any(s is not None and s >= 500 for s in facts["storm_statuses"]), facts
    assert facts["recovered"]
