"""The handler interface: which contract the runtime server speaks to the tenant's code.

``sless`` is this platform's own contract (ARCHITECTURE.md, "Handler contract"). The others
let a function written for a peer run unmodified: ``lambda`` (AWS Lambda behind API Gateway),
``openfaas`` (the ``python3-http`` and ``node20`` templates), ``knative`` (``func``'s Python
and Node templates), ``asgi`` and ``wsgi`` (a module-level app). The adapter lives inside the
runtime server (``runtimes/<runtime>/interfaces.*``), so that it runs in the same sandbox
as the handler, with nothing the handler does not already have; it is the same file in
embedded mode and in the Kubernetes image. Nothing here does I/O.
"""

from __future__ import annotations

from enum import StrEnum


class Interface(StrEnum):
    SLESS = "sless"
    LAMBDA = "lambda"
    OPENFAAS = "openfaas"
    KNATIVE = "knative"
    ASGI = "asgi"
    WSGI = "wsgi"


#: the interfaces each runtime speaks (ASGI and WSGI are Python specifications)
SUPPORTED: dict[str, frozenset[Interface]] = {
    "python3.11": frozenset(Interface),
    "nodejs20": frozenset(
        {Interface.SLESS, Interface.LAMBDA, Interface.OPENFAAS, Interface.KNATIVE}
    ),
}

#: the entrypoint when the spec names none: where each peer's own tooling puts the handler
#: (the AWS console's ``lambda_function.py`` and ``index.js``, OpenFaaS's ``handler.py`` and
#: ``handler.js``, ``func``'s ``function/func.py`` and ``index.js``)
DEFAULT_ENTRYPOINTS: dict[tuple[str, Interface], str] = {
    ("python3.11", Interface.SLESS): "handler.handle",
    ("nodejs20", Interface.SLESS): "handler.handle",
    ("python3.11", Interface.LAMBDA): "lambda_function.lambda_handler",
    ("nodejs20", Interface.LAMBDA): "index.handler",
    ("python3.11", Interface.OPENFAAS): "handler.handle",
    ("nodejs20", Interface.OPENFAAS): "handler.handle",
    ("python3.11", Interface.KNATIVE): "function.func.new",
    ("nodejs20", Interface.KNATIVE): "index.handle",
    ("python3.11", Interface.ASGI): "app.app",
    ("python3.11", Interface.WSGI): "app.app",
}

#: API Gateway's two event shapes: the HTTP API's (2.0) and the REST API's proxy (1.0)
PAYLOAD_FORMAT_VERSIONS = ("1.0", "2.0")


def check_interface(runtime: str, interface: Interface, payload_format_version: str | None) -> None:
    """Raises ValueError (shown to the tenant at PUT) when the combination cannot run."""
    if interface not in SUPPORTED.get(runtime, frozenset()):
        speaks = ", ".join(sorted(SUPPORTED.get(runtime, frozenset())))
        raise ValueError(f"interface {interface.value!r} is not available for {runtime} ({speaks})")
    if payload_format_version is not None and interface is not Interface.LAMBDA:
        raise ValueError("payload_format_version applies to the lambda interface only")


def default_entrypoint(runtime: str, interface: Interface) -> str:
    return DEFAULT_ENTRYPOINTS.get((runtime, interface), "handler.handle")


def interface_env(
    interface: Interface, payload_format_version: str | None, memory_mb: int
) -> dict[str, str]:
    """What the runtime server is told about the interface (the same in both modes: the
    sandbox and the pod add exactly these variables)."""
    env = {"SLESS_INTERFACE": interface.value, "SLESS_MEMORY_MB": str(memory_mb)}
    if interface is Interface.LAMBDA:
        env["SLESS_PAYLOAD_FORMAT_VERSION"] = payload_format_version or "2.0"
    return env
