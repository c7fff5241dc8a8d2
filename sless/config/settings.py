"""The root ``Settings``: every group, read from the ``SLESS_`` environment (and the
documented short aliases).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from sless.config.access import AdminSettings, AuthSettings, MetricsSettings
from sless.config.egress import EgressSettings
from sless.config.embedded import BuildSettings, EventsSettings, SandboxSettings
from sless.config.gateway import GatewaySettings, LimitsSettings, OtelSettings
from sless.config.kubernetes import KubernetesSettings
from sless.config.storage import DatabaseSettings, S3Settings, SecretsSettings
from sless.config.validation import LLMSettings, ValidationSettings


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("sless", appauthor=False))


#: short environment names the documentation promises, as ``alias: (group, field)``; the
#: long name ``SLESS_<GROUP>_<FIELD>`` keeps working and wins when both are set
ENV_ALIASES: dict[str, tuple[str, str]] = {
    "SLESS_AUTO_ONBOARD": ("auth", "auto_onboard"),
    "SLESS_ALLOW_NO_SANDBOX": ("kubernetes", "allow_no_sandbox"),
    "SLESS_EMBEDDED_ISOLATION": ("sandbox", "isolation"),
}


class _EnvAliases(PydanticBaseSettingsSource):
    """``ENV_ALIASES`` read from the environment, below every other source in priority.

    pydantic-settings merges sources deeply, higher priority first, so a value given by the
    long name (or to the constructor) is never replaced by its alias.
    """

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads the aliases itself

    def __call__(self) -> dict[str, Any]:
        environ = {key.upper(): value for key, value in os.environ.items()}
        found: dict[str, Any] = {}
        for alias, (group, name) in ENV_ALIASES.items():
            if alias in environ:
                found.setdefault(group, {})[name] = environ[alias]
        return found


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SLESS_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            dotenv_settings,
            file_secret_settings,
            _EnvAliases(settings_cls),
        )

    #: ``development`` allows the conveniences refused in ``production``
    environment: Literal["development", "production"] = "development"
    backend: Literal["local", "kubernetes"] = "local"
    data_dir: Path = Field(default_factory=default_data_dir)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    admin: AdminSettings = Field(default_factory=AdminSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    secrets: SecretsSettings = Field(default_factory=SecretsSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    otel: OtelSettings = Field(default_factory=OtelSettings)
    s3: S3Settings = Field(default_factory=S3Settings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    validation: ValidationSettings = Field(default_factory=ValidationSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    egress: EgressSettings = Field(default_factory=EgressSettings)
    build: BuildSettings = Field(default_factory=BuildSettings)
    events: EventsSettings = Field(default_factory=EventsSettings)
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)
