"""Typed settings, grouped by concern.

Every setting comes from the environment with the prefix ``SLESS_``; a group's fields are
``SLESS_<GROUP>_<FIELD>`` (``SLESS_DATABASE_URL``, ``SLESS_LLM_BASE_URL``,
``SLESS_S3_BUCKET``...); a few documented short names are aliases (``ENV_ALIASES``: the
long name wins when both are set). Settings are built once, by the CLI or a test, and
passed down: nothing below reads the environment itself, and nothing is created at
import time.

Secrets are ``SecretStr`` so that a settings object can be logged or shown in a traceback
without leaking them.

One module per group of concerns: ``storage`` (PostgreSQL, blobs, secret keys),
``gateway`` (HTTP server, limits and quotas), ``access`` (admin and metrics tokens, auth
providers), ``validation``, ``egress`` (what tenant egress may reach, both modes), ``embedded``
(sandbox, builds, events), ``kubernetes``, and
``settings`` (the root ``Settings`` and the environment aliases). Import them from here.
"""

from __future__ import annotations

from sless.config.access import (
    ASYMMETRIC_JWS_ALGORITHMS,
    MIN_CONFIGURED_TOKEN_LENGTH,
    TOKEN_FORMAT_HINT,
    AdminSettings,
    AuthProviderName,
    AuthSettings,
    MetricsSettings,
    check_configured_token,
)
from sless.config.egress import EgressSettings
from sless.config.embedded import BuildSettings, EventsSettings, SandboxSettings
from sless.config.gateway import GatewaySettings, LimitsSettings
from sless.config.kubernetes import KubernetesSettings, TenantPlan
from sless.config.settings import ENV_ALIASES, Settings, default_data_dir
from sless.config.storage import DatabaseSettings, S3Settings, SecretsSettings
from sless.config.validation import ArchiveLimits, LLMSettings, ValidationSettings

__all__ = [
    "ASYMMETRIC_JWS_ALGORITHMS",
    "ENV_ALIASES",
    "MIN_CONFIGURED_TOKEN_LENGTH",
    "TOKEN_FORMAT_HINT",
    "AdminSettings",
    "ArchiveLimits",
    "AuthProviderName",
    "AuthSettings",
    "BuildSettings",
    "DatabaseSettings",
    "EgressSettings",
    "EventsSettings",
    "GatewaySettings",
    "KubernetesSettings",
    "LLMSettings",
    "LimitsSettings",
    "MetricsSettings",
    "S3Settings",
    "SandboxSettings",
    "SecretsSettings",
    "Settings",
    "TenantPlan",
    "ValidationSettings",
    "check_configured_token",
    "default_data_dir",
]
