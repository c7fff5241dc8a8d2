"""``sless up`` SIGKILLed with asynchronous calls queued and in flight and cron ticks due:
each accepted call and each tick runs once, or ends ``interrupted``; never twice, never
neither (docs/RELIABILITY.md, docs/triggers.md).

The handlers print ``START <id>`` before and ``END <id>`` after a sleep, to the function's
log file in the data directory (the worker writes it with ``O_APPEND``, so what it printed
survives the kill): that is the record of what really ran, kept apart from the platform's
own bookkeeping. Everything else is read from PostgreSQL. The test waits for states, never
for a duration: it kills once a call is sure to be inside its handler (its ``START`` is
written and its row is dispatched), others are still queued, a tick is inside its handler
and later ticks are claimed but not started (``prewarm_s`` makes the scheduler claim them
a minute ahead).

One state cannot be produced on purpose by a kill, a call taken by a worker but not yet
dispatched (a window of one database round trip): after the kill, one queued row is put
in exactly the state such a crash leaves (``running`` under a live lease, no
``dispatched_at``). The restarted platform must run it.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from tests.faults.harness import Platform, Tenant, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

#: each line is one write(2): calls run at once in two workers appending to one log, and
#: print() writes its pieces separately (the runtime's stdout is unbuffered), so two
#: calls' words could interleave on one line
SLEEPY = (
    "import sys, time\n"
    "def handle(event, context):\n"
    "    tag = event['headers'].get('sless-tick') or context.invocation_id\n"
    "    sys.stdout.write(f'START {{tag}}\\n')\n"
    "    sys.stdout.flush()\n"
    "    time.sleep({seconds})\n"
    "    sys.stdout.write(f'END {{tag}}\\n')\n"
    "    sys.stdout.flush()\n"
    "    return {{'ok': True}}\n"
)
CALLS = 6
TERMINAL = ("succeeded", "failed", "dead", "interrupted")


def _lines(platform: Platform, tenant: Tenant, function: str) -> tuple[Counter[str], Counter[str]]:
    """How many times each id (or tick) printed START and END, over both processes."""
    log = platform.data_dir / "logs" / tenant.namespace / f"{function}.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    # each line a call prints carries its invocation id first: ``[<id>] START <tag>``
    starts = Counter(re.findall(r"^(?:\[[0-9a-f-]{36}\] )?START (\S+)$", text, re.M))
    ends = Counter(re.findall(r"^(?:\[[0-9a-f-]{36}\] )?END (\S+)$", text, re.M))
    return starts, ends


def _mentions(platform: Platform, *words: str) -> str:
    """The platform's own log lines and the tick function's log lines naming any of
    ``words`` (a failed assertion shows what happened to that call)."""
    texts = [platform.log_path.read_text(errors="replace")]
    texts += [p.read_text(errors="replace") for p in (platform.data_dir / "logs").rglob("*.log")]
    return "\n".join(
        line for text in texts for line in text.splitlines() if any(w in line for w in words)
    )[-6000:]


def _iso(value: object) -> str:
    """A tick as the handler saw it (``sless-tick``: ISO 8601 in the trigger's zone, UTC)."""
    assert hasattr(value, "isoformat")
    return str(value.isoformat())


def test_sigkill_runs_every_async_call_and_tick_once_or_marks_it_interrupted(
    home: Path,
) -> None:
    platform = Platform(
        home / "data",
        {
            "SLESS_EVENTS_QUEUE_CONCURRENCY": "2",  # the other calls stay queued
            "SLESS_EVENTS_SCHEDULER_INTERVAL_S": "0.5",
            "SLESS_EVENTS_POLL_INTERVAL_S": "0.5",
        },
    )
    try:
        platform.start()
        acme = platform.tenant("acme")
        acme.deploy("slow", SLEEPY.format(seconds=20), {"timeout_s": 120})
        acme.deploy("tick", SLEEPY.format(seconds=5), {"timeout_s": 120})
        with acme.client() as client:
            accepted = []
            for _ in range(CALLS):
                response = client.post(f"/fn/{acme.namespace}/slow", headers={"X-Sless-Async": "1"})
                assert response.status_code == 202, response.text
                accepted.append(response.headers["x-sless-invocation-id"])
            response = client.put(
                f"/v1/namespaces/{acme.namespace}/triggers/every2s",
                json={
                    "type": "cron",
                    "function": "tick",
                    "schedule": "* * * * * */2",
                    "prewarm_s": 60,  # ticks are claimed a minute ahead
                },
            )
            assert response.status_code == 201, response.text
            # a job run in its function at the kill: Failed "interrupted", never run again
            response = client.put(
                f"/v1/namespaces/{acme.namespace}/jobs/nightly",
                json={"function": "slow", "run_id": 1, "payload": {}},
            )
            assert response.status_code in (200, 201), response.text

        def job_row() -> dict[str, object]:
            rows = platform.query(
                "SELECT phase, error, run_id, invocation_id::text AS id FROM jobs"
                " WHERE namespace = $1 AND name = 'nightly'",
                acme.namespace,
            )
            return dict(rows[0].items())

        def queue_rows() -> dict[str, dict[str, object]]:
            rows = platform.query(
                "SELECT id::text, state, attempts, dispatched_at IS NOT NULL AS dispatched"
                " FROM invocation_queue WHERE id = ANY($1::uuid[])",
                accepted,
            )
            return {r["id"]: dict(r.items()) for r in rows}

        def tick_rows() -> list[dict[str, object]]:
            rows = platform.query(
                "SELECT tick, state, invocation_id::text AS id, tick > now() AS ahead"
                " FROM trigger_ticks WHERE namespace = $1 AND trigger = 'every2s' ORDER BY tick",
                acme.namespace,
            )
            return [dict(r.items()) for r in rows]

        def ready_to_kill() -> bool:
            rows = queue_rows()
            starts, _ = _lines(platform, acme, "slow")
            in_flight = [i for i, r in rows.items() if r["dispatched"] and starts[i] == 1]
            queued = [i for i, r in rows.items() if r["state"] == "queued"]
            tick_starts, _ = _lines(platform, acme, "tick")
            ticks = tick_rows()
            started = [t for t in ticks if t["state"] == "started" and tick_starts[_iso(t["tick"])]]
            claimed_ahead = [t for t in ticks if t["state"] == "claimed" and t["ahead"]]
            job = job_row()
            job_running = job["phase"] == "Running" and starts[str(job["id"])] == 1
            return bool(in_flight and queued and started and claimed_ahead and job_running)

        wait_until(
            "calls in flight and queued, a tick and a job run in their handler, ticks ahead",
            ready_to_kill,
            240,
            show=lambda: (queue_rows(), tick_rows()),
        )
        platform.kill()  # the whole process group: gateway and (die-with-parent) workers

        # the state at the kill, read from the database the killed process left
        at_kill = queue_rows()
        in_flight = {i for i, r in at_kill.items() if r["state"] == "running" and r["dispatched"]}
        queued = sorted(i for i, r in at_kill.items() if r["state"] == "queued")
        assert in_flight, at_kill
        assert queued, at_kill
        # the state a crash between take and dispatch leaves, on one queued call
        taken = queued[0]
        platform.query(
            "UPDATE invocation_queue SET state = 'running', lease = gen_random_uuid(),"
            " locked_until = now() + interval '1 hour', dispatched_at = NULL WHERE id = $1",
            taken,
        )
        ticks_at_kill = tick_rows()
        started_at_kill = {_iso(t["tick"]) for t in ticks_at_kill if t["state"] == "started"}
        claimed_at_kill = {_iso(t["tick"]) for t in ticks_at_kill if t["state"] == "claimed"}
        assert started_at_kill, ticks_at_kill
        assert claimed_at_kill, ticks_at_kill
        job_at_kill = job_row()
        assert job_at_kill["phase"] == "Running", job_at_kill

        platform.start()  # at once, on the same data directory

        def all_ended() -> dict[str, dict[str, object]] | None:
            rows = queue_rows()
            done = len(rows) == CALLS and all(r["state"] in TERMINAL for r in rows.values())
            return rows if done else None

        final = wait_until("every accepted call to end", all_ended, 600, show=queue_rows)
        last_claimed = max(claimed_at_kill)

        def claimed_ticks_ended() -> list[dict[str, object]] | None:
            ticks = tick_rows()
            by_tick = {_iso(t["tick"]): t for t in ticks}
            done = all(
                by_tick[t]["state"] in ("finished", "interrupted")
                for t in started_at_kill | claimed_at_kill
            )
            return ticks if done else None

        ticks = wait_until(
            "every tick open at the kill to end", claimed_ticks_ended, 600, show=tick_rows
        )

        def job_ended() -> dict[str, object] | None:
            job = job_row()
            if job["phase"] != "Failed":
                return None
            # its invocation record goes through the batched writer: wait for it too
            recorded = platform.query(
                "SELECT 1 FROM invocations WHERE id = $1::uuid", str(job["id"])
            )
            return job if recorded else None

        job = wait_until("the interrupted job run to be Failed", job_ended, 120, show=job_row)
        with acme.client() as client:
            client.delete(f"/v1/namespaces/{acme.namespace}/triggers/every2s")
        records = {
            r["id"]: dict(r.items())
            for r in platform.query(
                "SELECT id::text, status, error, trigger FROM invocations WHERE namespace = $1",
                acme.namespace,
            )
        }
    finally:
        platform.stop()

    # -- asynchronous calls: once, or interrupted; never both, never neither ---------------
    starts, ends = _lines(platform, acme, "slow")
    for call in accepted:
        row, record = final[call], records.get(call)
        assert starts[call] <= 1, f"{call} ran {starts[call]} times"
        assert record is not None, f"{call} has no invocation record"
        if call in in_flight:
            # in its handler at the kill: not run again, visibly interrupted
            assert row["state"] == "interrupted", (call, row)
            assert (record["status"], record["error"]) == (500, "interrupted"), record
            assert (ends[call], row["attempts"]) == (0, 1), (call, row)
        else:
            # queued, or taken but never dispatched, at the kill: ran once, after the restart
            assert row["state"] == "succeeded", (call, row)
            assert (starts[call], ends[call]) == (1, 1), call
            assert (row["attempts"], record["status"]) == (1, 200), (call, row, record)
    assert final[taken]["state"] == "succeeded"

    # -- the job run: interrupted, with its record, never run again ---------------------------
    run = str(job_at_kill["id"])
    assert (job["id"], job["run_id"]) == (run, 1), job
    assert str(job["error"]).startswith("interrupted"), job
    assert (starts[run], ends[run]) == (1, 0), (starts[run], ends[run])
    assert (records[run]["status"], records[run]["error"]) == (500, "interrupted"), records[run]

    # -- cron ticks: once, or interrupted; none twice, none missing -------------------------
    tick_starts, tick_ends = _lines(platform, acme, "tick")
    by_tick = {_iso(t["tick"]): t for t in ticks}
    assert all(n == 1 for n in tick_starts.values()), tick_starts  # no tick ran twice
    for tick in started_at_kill:
        t = by_tick[tick]
        assert (t["state"], tick_ends[tick]) == ("interrupted", 0), (tick, t)
        assert (records[str(t["id"])]["status"], records[str(t["id"])]["error"]) == (
            500,
            "interrupted",
        )
    for tick in claimed_at_kill:
        t = by_tick[tick]
        record = records.get(str(t["id"]))
        assert t["state"] == "finished", (tick, t)
        assert (tick_starts[tick], tick_ends[tick]) == (1, 1), (
            tick,
            record,
            _mentions(platform, tick, str(t["id"])),
        )
        assert record is not None, tick
        assert record["status"] == 200, (tick, record)
    # none missing: every 2 s from the first tick to the last one claimed at the kill
    first = min(t["tick"] for t in ticks)
    expected = set()
    moment = first
    while _iso(moment) <= last_claimed:
        expected.add(_iso(moment))
        moment += timedelta(seconds=2)
    assert expected <= set(by_tick), sorted(expected - set(by_tick))
    for tick in expected:
        assert by_tick[tick]["state"] in ("finished", "interrupted"), by_tick[tick]
