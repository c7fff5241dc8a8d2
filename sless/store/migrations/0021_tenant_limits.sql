-- Quotas the provider set for one tenant (PUT /v1/admin/tenants/{tenant}/limits): the
-- ``max_*`` names of LimitsSettings with their values; a name not in ``limits`` follows
-- the platform's setting. Gone with the tenant.
CREATE TABLE tenant_limits (
    tenant      text PRIMARY KEY REFERENCES tenants(name) ON DELETE CASCADE,
    limits      jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- the queued_calls quota counts a tenant's calls queued or running on every async call
CREATE INDEX invocation_queue_pending ON invocation_queue (namespace)
    WHERE state IN ('queued', 'running');
