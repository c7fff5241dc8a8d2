"""The CRDs in deploy/crds/ are generated from the models and structural."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sless.crds import KINDS, render_crds, structural, to_yaml

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"


def test_files_in_deploy_are_not_stale() -> None:
    rendered = render_crds()
    assert sorted(p.name for p in CRDS.glob("*.yaml")) == sorted(rendered)
    for name, crd in rendered.items():
        assert (CRDS / name).read_text() == to_yaml(crd), (
            f"deploy/crds/{name} is stale: run `uv run python -m sless.crds`"
        )


def _walk(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        out.append((path, node))
        for key in ("properties",):
            for name, sub in (node.get(key) or {}).items():
                out += _walk(sub, f"{path}.{name}")
        if isinstance(node.get("items"), dict):
            out += _walk(node["items"], f"{path}[]")
        if isinstance(node.get("additionalProperties"), dict):
            out += _walk(node["additionalProperties"], f"{path}{{}}")
    return out


@pytest.mark.parametrize("file", sorted(render_crds()))
def test_schemas_are_structural(file: str) -> None:
    crd = render_crds()[file]
    [version] = crd["spec"]["versions"]
    for path, node in _walk(version["schema"]["openAPIV3Schema"]):
        text = json.dumps(node)
        for keyword in ("$ref", "anyOf", "$defs"):
            assert keyword not in text, path
        assert "type" in node or node.get("x-kubernetes-preserve-unknown-fields"), path
        assert not ("properties" in node and "additionalProperties" in node), path
        assert "title" not in node, path
        assert node.get("default", 0) is not None, path
    assert version["subresources"] == {"status": {}}


def test_function_schema_details() -> None:
    crd = render_crds()["functions.yaml"]
    assert crd["metadata"]["name"] == "functions.sless.kube5s.ru"
    assert crd["spec"]["scope"] == "Namespaced"
    version = crd["spec"]["versions"][0]
    assert [c["name"] for c in version["additionalPrinterColumns"]] == [
        "Runtime",
        "Phase",
        "SHA",
        "Version",
        "Age",
        "Image",
    ]
    schema = version["schema"]["openAPIV3Schema"]
    assert schema["required"] == ["spec"]
    spec = schema["properties"]["spec"]["properties"]
    assert spec["runtime"] == {
        "enum": ["python3.11", "nodejs20"],
        "type": "string",
        "default": "python3.11",
    }
    assert spec["env"] == {"additionalProperties": {"type": "string"}, "type": "object"}
    assert spec["memory_mb"]["minimum"] == 32
    assert spec["memory_mb"]["maximum"] == 4096
    assert spec["timeout_s"]["exclusiveMinimum"] is True
    assert spec["timeout_s"]["minimum"] == 0
    assert spec["code"]["nullable"] is True
    assert spec["code"]["required"] == ["sha256", "blob_key"]
    assert spec["code"]["properties"]["sha256"]["pattern"] == "^[0-9a-f]{64}$"
    status = schema["properties"]["status"]["properties"]
    assert status["validation"] == {
        "x-kubernetes-preserve-unknown-fields": True,
        "type": "object",
        "nullable": True,
    }
    assert status["servingSpec"]["properties"]["runtime"]["enum"] == ["python3.11", "nodejs20"]
    assert status["builds"] == {"additionalProperties": {"type": "string"}, "type": "object"}
    assert status["conditions"]["items"]["required"] == ["type", "status"]


def test_only_untyped_fields_preserve_unknown() -> None:
    preserved = {
        (file, path)
        for file, crd in render_crds().items()
        for path, node in _walk(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
        if node.get("x-kubernetes-preserve-unknown-fields")
    }
    assert preserved == {
        ("functions.yaml", ".status.validation"),
        ("functionjobs.yaml", ".spec.payload"),
        ("triggers.yaml", ".spec"),  # trigger types carry their own fields
        ("triggers.yaml", ".spec.payload"),
    }


def test_tenant_is_cluster_scoped() -> None:
    crd = render_crds()["tenants.yaml"]
    assert crd["spec"]["scope"] == "Cluster"
    assert "required" not in crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert set(KINDS) == {"Function", "Trigger", "FunctionJob", "Tenant"}


def test_structural_translates_json_schema() -> None:
    schema = {
        "$defs": {"E": {"enum": ["a", "b"], "type": "string", "title": "E"}},
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "e": {"anyOf": [{"$ref": "#/$defs/E"}, {"type": "null"}], "default": None},
            "c": {"const": "x"},
            "n": {"type": "number", "exclusiveMaximum": 5},
            "m": {"type": "object", "additionalProperties": True},
        },
    }
    assert structural(schema) == {
        "type": "object",
        "properties": {
            "e": {"pattern": "^(?:a|b)$", "type": "string", "nullable": True},
            "c": {"enum": ["x"], "type": "string"},
            "n": {"type": "number", "maximum": 5, "exclusiveMaximum": True},
            "m": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    with pytest.raises(ValueError, match="anyOf"):
        structural({"anyOf": [{"type": "string"}, {"type": "integer"}]})
