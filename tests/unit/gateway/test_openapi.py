"""The OpenAPI schema: errors, pages and headers described; the committed copy current."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tools.openapi.compat import COMMITTED, breaking_changes, live_schema


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return live_schema()


def test_committed_copy_is_the_live_schema(schema: dict[str, Any]) -> None:
    import json

    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert committed == schema, "docs/openapi.json is stale: run scripts/openapi write"


def test_every_operation_describes_the_error_shape(schema: dict[str, Any]) -> None:
    assert set(schema["components"]["schemas"]["ErrorBody"]["properties"]) == {"error"}
    for path, item in schema["paths"].items():
        for method, op in item.items():
            for status in ("400", "401", "404", "422", "429"):
                ref = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/ErrorBody"), (method, path, status)
            assert {"Retry-After", "RateLimit"} <= set(op["responses"]["429"]["headers"])


def test_lists_describe_their_paging(schema: dict[str, Any]) -> None:
    lists = {
        "/v1/namespaces/{ns}/functions": True,
        "/v1/namespaces/{ns}/invocations": False,
        "/v1/namespaces/{ns}/audit": False,
        "/v1/admin/tenants": True,
    }
    for path, total in lists.items():
        op = schema["paths"][path]["get"]
        assert {p["name"] for p in op["parameters"]} >= {"limit", "cursor"}
        ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        page = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert {"count", "next_cursor"} <= set(page["properties"])
        assert ("total" in page["properties"]) is total


def test_object_routes_describe_etag_and_if_match(schema: dict[str, Any]) -> None:
    op = schema["paths"]["/v1/namespaces/{ns}/functions/{name}"]
    assert "ETag" in op["get"]["responses"]["200"]["headers"]
    assert "If-Match" in {p["name"] for p in op["put"]["parameters"]}
    assert "412" in op["put"]["responses"]


def test_removing_or_renaming_a_field_is_breaking(schema: dict[str, Any]) -> None:
    assert breaking_changes(schema, schema) == []
    renamed = copy.deepcopy(schema)
    props = renamed["components"]["schemas"]["ErrorDetail"]["properties"]
    props["text"] = props.pop("message")
    assert breaking_changes(schema, renamed) == ["removed property: ErrorDetail message"]
    # an addition is not breaking; the same rename seen from the other side is
    assert breaking_changes(renamed, schema) == ["removed property: ErrorDetail text"]


def test_a_new_required_parameter_is_breaking(schema: dict[str, Any]) -> None:
    changed = copy.deepcopy(schema)
    op = changed["paths"]["/v1/namespaces/{ns}/functions"]["get"]
    op["parameters"].append({"name": "x", "in": "query", "required": True, "schema": {}})
    assert breaking_changes(schema, changed) == [
        "now required: GET /v1/namespaces/{ns}/functions query x"
    ]


def test_a_new_operation_with_required_parameters_breaks_nothing(schema: dict[str, Any]) -> None:
    older = copy.deepcopy(schema)
    del older["paths"]["/v1/namespaces/{ns}/functions"]["get"]
    assert breaking_changes(older, schema) == []
