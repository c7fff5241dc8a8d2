-- The HTTP API for programs (issue 18): resource versions, idempotency keys, signing key.

-- One sequence for every object, like etcd's revision: a resource_version is unique across
-- kinds and only grows. Every UPDATE of a row takes a new one (the trigger below), so an
-- If-Match on a stale version is always noticed, whoever wrote in between.
CREATE SEQUENCE resource_versions;

ALTER TABLE functions ADD COLUMN resource_version bigint NOT NULL DEFAULT nextval('resource_versions');
ALTER TABLE triggers ADD COLUMN resource_version bigint NOT NULL DEFAULT nextval('resource_versions');
ALTER TABLE jobs ADD COLUMN resource_version bigint NOT NULL DEFAULT nextval('resource_versions');
ALTER TABLE secrets ADD COLUMN resource_version bigint NOT NULL DEFAULT nextval('resource_versions');

CREATE FUNCTION sless_next_resource_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.resource_version := nextval('resource_versions');
    RETURN NEW;
END
$$;

CREATE TRIGGER functions_resource_version BEFORE UPDATE ON functions
    FOR EACH ROW EXECUTE FUNCTION sless_next_resource_version();
CREATE TRIGGER triggers_resource_version BEFORE UPDATE ON triggers
    FOR EACH ROW EXECUTE FUNCTION sless_next_resource_version();
CREATE TRIGGER jobs_resource_version BEFORE UPDATE ON jobs
    FOR EACH ROW EXECUTE FUNCTION sless_next_resource_version();
CREATE TRIGGER secrets_resource_version BEFORE UPDATE ON secrets
    FOR EACH ROW EXECUTE FUNCTION sless_next_resource_version();

-- The key that signs paging cursors and seals stored idempotent responses, when the
-- settings give none: generated once, shared by every gateway of the database.
CREATE TABLE signing_keys (
    name        text PRIMARY KEY,
    key         bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Idempotency-Key records, per namespace ('' = the provider admin). The client's key is
-- kept only as an HMAC; the first response is sealed with a key derived from the client's
-- key, so the table alone never yields a response (an onboarding response holds a token).
CREATE TABLE idempotency_keys (
    namespace       text NOT NULL,
    key_digest      bytea NOT NULL,
    operation       text NOT NULL,
    request_digest  bytea NOT NULL,
    state           text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done')),
    status          integer,
    response        bytea,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, key_digest)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (namespace, created_at);
