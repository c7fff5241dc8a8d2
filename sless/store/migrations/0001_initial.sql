-- sless schema, version 1.
CREATE TABLE tenants (
    name        text PRIMARY KEY,
    namespace   text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Tokens are stored as SHA-256 digests of the secret; the secret itself is shown once.
CREATE TABLE tokens (
    id            bigserial PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('tenant', 'admin')),
    tenant        text REFERENCES tenants(name) ON DELETE CASCADE,
    digest        bytea NOT NULL UNIQUE,
    description   text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz,
    CHECK ((kind = 'tenant') = (tenant IS NOT NULL))
);

-- Desired state (spec) and observed state (status) of every function.
CREATE TABLE functions (
    namespace        text NOT NULL,
    name             text NOT NULL,
    spec             jsonb NOT NULL,
    phase            text NOT NULL DEFAULT 'Pending',
    message          text NOT NULL DEFAULT '',
    validation       jsonb,
    observed_sha256  text,
    -- the spec of the version that is serving (the last one that built)
    serving_spec     jsonb,
    generation       bigint NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, name)
);

-- Validation reports, cached by the code's digest and runtime.
CREATE TABLE validation_reports (
    sha256      text NOT NULL,
    runtime     text NOT NULL,
    verdict     text NOT NULL,
    report      jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (sha256, runtime)
);

CREATE TABLE invocations (
    id              uuid PRIMARY KEY,
    tenant          text NOT NULL,
    namespace       text NOT NULL,
    function        text NOT NULL,
    status          integer NOT NULL,
    duration_ms     double precision NOT NULL,
    request_bytes   bigint NOT NULL,
    response_bytes  bigint NOT NULL,
    started_at      timestamptz NOT NULL,
    error           text,
    trigger         text
);
CREATE INDEX invocations_by_function ON invocations (namespace, function, started_at DESC);
CREATE INDEX invocations_by_namespace ON invocations (namespace, started_at DESC);
