"""Backends: the part of sless that differs between embedded and Kubernetes mode.

``call_function`` (one call of a function, whatever the mode) and the header rule of the
proxy (``headers``) live here too, so that the gateway and ``sless.events`` share them.
"""

from sless.backends.base import Backend, Upstream
from sless.backends.calling import Response, call_function

__all__ = ["Backend", "Response", "Upstream", "call_function"]
