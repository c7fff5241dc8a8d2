"""LLM review: an OpenAI-compatible model reads the upload and may add suspicion.

Design and security reasoning:

- **Off unless configured.** Without ``base_url`` and ``model`` the stage is ``skipped`` and
  says so in the report.
- **The upload is untrusted data, not instructions.** Comments and docstrings are removed
  first (:mod:`sless.validation.stripping`, real tokenizers), so the usual place for text
  aimed at an AI reviewer never reaches it. Each file is sent between boundary lines
  carrying a random per-request nonce (``<<<FILE id=NONCE ...>>>`` / ``<<<END id=NONCE>>>``)
  that the content cannot know in advance, and a request whose content happens to contain
  the nonce gets a new one. Paths are JSON-quoted inside the boundary, so a file name cannot
  close it either. Every code line carries its original line number, so findings point at
  the upload even after stripping and splitting.
- **The answer is data we check.** The request asks for structured output (a JSON schema,
  ``strict``), and the answer is validated again here with a strict pydantic model: an
  unknown verdict, a missing field, an extra field or a wrong type makes it unparsable.
- **The LLM can only add suspicion.** ``malicious`` gives findings of severity ``reject``,
  ``suspicious`` of severity ``review``, ``benign`` gives none: this stage never returns
  anything that could clear another stage's finding, and the report's verdict is the
  strictest of all stages (:func:`sless.validation.report.combine`).
- **A failing model never lets code through by accident.** Timeouts, HTTP and connection
  errors, refusals (``refusal`` or ``finish_reason == "content_filter"``), truncated, empty
  or unparsable answers make the stage ``error`` with a short detail, and its verdict is the
  provider's ``failure_policy`` (``review`` by default). Retries are limited (one, by the
  client) and each request has a deadline of ``timeout_s``, so a dead model cannot stall
  uploads. Error details carry the kind of failure and a status code, never a response
  body (which may echo the API key) nor the model's text.
- **Large uploads are split, never truncated.** Files are packed into parts of at most
  ``token_budget`` estimated tokens (4 characters a token); a file larger than that is
  split by lines. Every part is reviewed and the strictest part decides. An upload that
  would need more than ``max_parts`` requests is not reviewed at all: that is an error,
  and the failure policy applies.
- **Reviewed once.** Results are cached by (code sha256, model, :data:`PROMPT_VERSION`);
  only completed reviews are cached, never errors, so a transient failure is retried on
  the next upload of the same code. Changing the prompt changes the version.
- The API key is a ``SecretStr`` until the client is built; it is never logged and is
  scrubbed from any detail string as a second line of defence. Without a key a fixed
  placeholder is sent, so that the client does not pick up an ``OPENAI_API_KEY`` from the
  environment and hand it to an arbitrary endpoint.
"""

from sless.validation.llm.caching import (
    MemoryReviewCache,
    ReviewCache,
    ReviewKey,
    ReviewStore,
    StoredReviewCache,
)
from sless.validation.llm.prompting import PROMPT_VERSION
from sless.validation.llm.reviewing import review_with_llm

__all__ = [
    "PROMPT_VERSION",
    "MemoryReviewCache",
    "ReviewCache",
    "ReviewKey",
    "ReviewStore",
    "StoredReviewCache",
    "review_with_llm",
]
