-- Exactly once, or visibly interrupted (sless.store.queue, sless.store.triggers).
--
-- An asynchronous call taken by a worker gets a fresh ``lease`` (the fence: only the attempt
-- holding it may write the row again) and is stamped ``dispatched_at`` in PostgreSQL before
-- it is handed to the function. A taken row never dispatched is taken again (it never ran);
-- a dispatched row whose worker stopped is never run again: it ends ``interrupted``.
ALTER TABLE invocation_queue DROP CONSTRAINT invocation_queue_state_check;
ALTER TABLE invocation_queue ADD CONSTRAINT invocation_queue_state_check
    CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'dead', 'interrupted'));
ALTER TABLE invocation_queue ADD COLUMN lease uuid;
ALTER TABLE invocation_queue ADD COLUMN dispatched_at timestamptz;
-- rows running under the previous version may have reached their function: interrupted,
-- never run again, once their lease runs out
UPDATE invocation_queue SET dispatched_at = coalesce(started_at, now()) WHERE state = 'running';

-- A cron tick is ``claimed`` (inserted, with a lease until the tick plus a margin), then
-- ``started`` (stamped before the function is called, the lease extended to its timeout)
-- and ``finished``. A claimed tick whose lease ran out was never started: it is fired by
-- the next scheduler (inside the catch-up window; ``skipped`` past it). A started tick whose
-- lease ran out is ``interrupted``, with an invocation record saying so; never fired twice.
ALTER TABLE trigger_ticks ADD COLUMN state text NOT NULL DEFAULT 'claimed'
    CHECK (state IN ('claimed', 'started', 'finished', 'interrupted', 'skipped'));
ALTER TABLE trigger_ticks ADD COLUMN lease uuid;
ALTER TABLE trigger_ticks ADD COLUMN locked_until timestamptz;
ALTER TABLE trigger_ticks ADD COLUMN started_at timestamptz;
ALTER TABLE trigger_ticks ADD COLUMN finished_at timestamptz;
-- ticks claimed under the previous version: their outcome is unknown, never fired again
UPDATE trigger_ticks SET state = 'finished';
CREATE INDEX trigger_ticks_open ON trigger_ticks (locked_until)
    WHERE state IN ('claimed', 'started');
