-- Triggers, jobs and asynchronous invocations (embedded mode's desired and observed state).
CREATE TABLE triggers (
    namespace   text NOT NULL,
    name        text NOT NULL,
    spec        jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- a schedule is fired from here on (re-enabling never replays the disabled time)
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, name)
);

-- One row per cron tick that some scheduler took: the primary key makes "at most once"
-- hold across every gateway process sharing the database.
CREATE TABLE trigger_ticks (
    namespace      text NOT NULL,
    trigger        text NOT NULL,
    tick           timestamptz NOT NULL,
    claimed_at     timestamptz NOT NULL DEFAULT now(),
    invocation_id  uuid,
    PRIMARY KEY (namespace, trigger, tick)
);

-- ``run_id`` is the last run claimed (0: none). A run is claimed by raising it in the same
-- statement that reads the spec, so a run id is never started twice, across restarts.
CREATE TABLE jobs (
    namespace      text NOT NULL,
    name           text NOT NULL,
    spec           jsonb NOT NULL,
    phase          text NOT NULL DEFAULT 'Idle',
    message        text NOT NULL DEFAULT '',
    run_id         bigint NOT NULL DEFAULT 0,
    invocation_id  uuid,
    result         text,
    error          text,
    started_at     timestamptz,
    completed_at   timestamptz,
    -- a Running job past this moment was interrupted (its gateway stopped)
    deadline_at    timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, name)
);

-- Asynchronous invocations: a durable queue taken with FOR UPDATE SKIP LOCKED.
CREATE TABLE invocation_queue (
    id               uuid PRIMARY KEY,
    namespace        text NOT NULL,
    function         text NOT NULL,
    state            text NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'dead')),
    method           text NOT NULL,
    path             text NOT NULL,
    headers          jsonb NOT NULL,
    body             bytea NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    -- a running row past this moment belongs to a gateway that stopped: it is retried
    locked_until     timestamptz,
    status           integer,
    result           bytea,
    result_truncated boolean NOT NULL DEFAULT false,
    content_type     text,
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz
);
CREATE INDEX invocation_queue_due ON invocation_queue (next_attempt_at) WHERE state = 'queued';
CREATE INDEX invocation_queue_stale ON invocation_queue (locked_until) WHERE state = 'running';
CREATE INDEX invocation_queue_by_namespace ON invocation_queue (namespace, created_at DESC);
