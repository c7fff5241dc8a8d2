"""The HTTP gateway: management API, uploads, admin API and the invocation proxy."""

from sless.gateway.app import Gateway, create_app
from sless.gateway.platform import Platform

__all__ = ["Gateway", "Platform", "create_app"]
