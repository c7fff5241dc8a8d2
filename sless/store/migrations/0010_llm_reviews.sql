-- Completed LLM reviews, so that the same code is never sent to the same model twice.
CREATE TABLE llm_reviews (
    sha256          text NOT NULL,
    model           text NOT NULL,
    prompt_version  text NOT NULL,
    result          jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (sha256, model, prompt_version)
);
