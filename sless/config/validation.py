"""Upload validation: archive limits, semgrep and the LLM review."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class ArchiveLimits(BaseModel):
    max_files: int = 2000
    max_total_bytes: int = 200 * 1024 * 1024
    max_file_bytes: int = 50 * 1024 * 1024
    #: uncompressed / compressed size above which a member is a suspected zip bomb
    max_compression_ratio: float = 200.0
    max_path_length: int = 255
    max_depth: int = 32


class LLMSettings(BaseModel):
    """LLM review through an OpenAI-compatible API; off unless ``base_url`` and ``model``."""

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    #: what an error, timeout, refusal or unparsable answer turns into
    failure_policy: Literal["review", "reject", "allow"] = "review"
    timeout_s: float = 60.0
    #: tokens of code per request; larger uploads are split and every part reviewed
    token_budget: int = 12000


class ValidationSettings(BaseModel):
    archive: ArchiveLimits = Field(default_factory=ArchiveLimits)
    #: semgrep executable (its own environment; see scripts/setup)
    semgrep_bin: str = "semgrep"
    semgrep_timeout_s: float = 60.0
    #: scan small re-uploads (a few changed files) with a resident `semgrep lsp`, falling
    #: back to a one-shot scan on anything unexpected (sless/validation/resident.py)
    semgrep_resident: bool = True
    #: the npm registry builds install from (both modes): a package-lock.json may resolve
    #: packages only under this URL (sless.policies.manifests)
    npm_registry: str = "https://registry.npmjs.org/"
    #: skip semgrep entirely (development only; the report says it did not run)
    static_enabled: bool = True
    #: run every upload once with canary secrets on a recording network
    #: (sless/validation/detonation.py); skipped, and said so, where the host cannot
    detonation_enabled: bool = True
    #: how long the detonation harness may run the function, imports included
    detonation_budget_s: float = Field(default=1.0, gt=0, le=10)
