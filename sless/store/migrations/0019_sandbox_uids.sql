-- The host uid and gid of each namespace's sandboxed workers: uid = gid = the platform's
-- SLESS_SANDBOX_UID_BASE + slot. A slot is given once and never reused (a deleted tenant
-- keeps its row): files or processes a former tenant left behind can never belong to a
-- new one.
CREATE TABLE sandbox_uids (
    namespace text PRIMARY KEY,
    slot integer NOT NULL UNIQUE CHECK (slot >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
);
