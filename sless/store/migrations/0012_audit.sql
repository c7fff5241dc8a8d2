-- The audit log: one row per management action (who, what, when, outcome).
-- No foreign keys: the log outlives the tenants and tokens it names. ``namespace`` is the
-- tenant log the row belongs to (the actor's namespace); NULL for the provider admin and
-- for unauthenticated attempts, which only the provider's view shows. A tenant sees the
-- rows of its namespace written since the tenant was created, so a tenant created again
-- under an old name never sees its predecessor's log.
CREATE TABLE audit_log (
    id                bigserial PRIMARY KEY,
    at                timestamptz NOT NULL DEFAULT now(),
    actor_kind        text NOT NULL CHECK (actor_kind IN ('tenant', 'admin', 'anonymous')),
    tenant            text,
    namespace         text,
    auth_provider     text,
    auth_subject      text,
    client            text NOT NULL,
    method            text NOT NULL,
    action            text NOT NULL,
    target_namespace  text,
    target_name       text,
    status            integer NOT NULL,
    outcome           text NOT NULL,
    detail            text
);

CREATE INDEX audit_log_namespace ON audit_log (namespace, id DESC);
CREATE INDEX audit_log_tenant ON audit_log (tenant, id DESC);
