-- Function versions (issue 16): every upload that passed validation, and every PUT that
-- changed what runs, is an immutable row here: the code's sha256, the spec it ran with
-- (without the traffic split), the validation report, who made it and when. ``state``:
-- allowed (may serve), held (waits for the provider's review), rejected (by the review).
-- Rows go with their function; old ones are pruned to the tenant's ``max_versions``.
CREATE TABLE function_versions (
    namespace   text NOT NULL,
    name        text NOT NULL,
    number      integer NOT NULL CHECK (number > 0),
    sha256      text NOT NULL,
    spec        jsonb NOT NULL,
    validation  jsonb,
    state       text NOT NULL DEFAULT 'allowed'
                CHECK (state IN ('allowed', 'held', 'rejected')),
    created_by  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, name, number)
);
-- garbage collection asks whether any version still refers to a blob
CREATE INDEX function_versions_by_sha256 ON function_versions (sha256);

-- which version served an invocation (NULL: before versions, or not known)
ALTER TABLE invocations ADD COLUMN version text;
