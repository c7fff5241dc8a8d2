"""Which hosts a confined installer may reach (sless.backends.local.installer_network)."""

from __future__ import annotations

from sless.backends.local.installer_network import index_destinations, registry_destinations

PYPI = [("pypi.org", 443), ("files.pythonhosted.org", 443)]


def test_pypi_and_its_file_host_by_default() -> None:
    assert index_destinations({}) == PYPI


def test_a_configured_index_replaces_pypi() -> None:
    environ = {"UV_INDEX_URL": "http://127.0.0.1:3141/root/pypi/+simple/"}
    assert index_destinations(environ) == [("127.0.0.1", 3141)]


def test_extra_and_named_indexes_are_added() -> None:
    environ = {
        "UV_DEFAULT_INDEX": "https://mirror.example/simple",
        "UV_EXTRA_INDEX_URL": "https://a.example/simple http://b.example:8080/simple",
        "UV_INDEX": "internal=https://c.example/simple https://d.example/simple",
    }
    assert index_destinations(environ) == [
        ("mirror.example", 443),
        ("a.example", 443),
        ("b.example", 8080),
        ("c.example", 443),
        ("d.example", 443),
    ]


def test_extra_index_keeps_pypi_as_default() -> None:
    environ = {"UV_EXTRA_INDEX_URL": "https://a.example/simple"}
    assert index_destinations(environ) == [*PYPI, ("a.example", 443)]


def test_the_npm_registry_alone() -> None:
    assert registry_destinations("https://registry.npmjs.org/") == [("registry.npmjs.org", 443)]
    assert registry_destinations("http://[::1]:4873/") == [("::1", 4873)]
    assert registry_destinations("not a url") == []
