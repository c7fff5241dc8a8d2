-- Uploads held for a provider's review (validation verdict "review"), and the decisions.
CREATE TABLE reviews (
    id           bigserial PRIMARY KEY,
    namespace    text NOT NULL,
    function     text NOT NULL,
    sha256       text NOT NULL,
    report       jsonb NOT NULL,
    state        text NOT NULL DEFAULT 'pending'
                 CHECK (state IN ('pending', 'approved', 'rejected', 'superseded')),
    reason       text,
    decided_by   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz
);
CREATE INDEX reviews_pending ON reviews (state, created_at);
