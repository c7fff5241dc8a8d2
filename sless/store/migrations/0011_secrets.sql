-- Tenant secrets (broker URLs of rabbitmq triggers...): write-only through the API.
-- The value is read only by the platform itself (a trigger's consumer); it goes with the
-- tenant (ON DELETE CASCADE), so a tenant created again under the same name sees none.
CREATE TABLE secrets (
    namespace   text NOT NULL REFERENCES tenants(namespace) ON DELETE CASCADE,
    name        text NOT NULL,
    value       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, name)
);
