"""CustomResourceDefinitions generated from the pydantic models: one schema source.

``python -m sless.crds [DIR]`` writes ``deploy/crds/*.yaml``; a unit test fails when those
files differ from what this module renders, so the models and the CRDs cannot drift.

Kubernetes wants *structural* OpenAPI v3 schemas (every node typed, no ``$ref``, no
``anyOf`` with differing types, ``nullable`` instead of a ``null`` type), while pydantic
emits JSON Schema 2020-12. ``structural`` translates:

- ``$ref`` / ``$defs`` are inlined;
- ``anyOf: [X, {type: null}]`` becomes ``X`` with ``nullable: true``; a nullable string
  ``enum`` becomes the same choice as a ``pattern`` (the API server checks a null against
  an enum, and refuses it, even when nullable);
- ``const`` becomes a one-value ``enum``; numeric ``exclusiveMinimum: n`` becomes
  ``minimum: n, exclusiveMinimum: true`` (OpenAPI 3.0 form);
- a map (``dict[str, X]``) keeps ``additionalProperties: X``; ``dict[str, Any]`` and ``Any``
  become ``x-kubernetes-preserve-unknown-fields`` (only the validation report, the job
  payload and the extra fields of a trigger type need that);
- ``additionalProperties: false`` is dropped: the API server prunes unknown fields anyway
  and a structural schema may not combine it with ``properties``;
- titles and ``default: null`` are dropped; other defaults are kept, so objects created
  with kubectl are defaulted like API bodies.

Pure: no I/O except in ``main``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sless.config import KubernetesSettings
from sless.models import (
    FunctionCRStatus,
    FunctionJobStatus,
    FunctionResourceSpec,
    JobSpec,
    TenantSpec,
    TenantStatus,
    TriggerSpec,
    TriggerStatus,
)

#: where ``main`` writes by default (repository layout)
DEFAULT_DIR = Path(__file__).resolve().parents[1] / "deploy" / "crds"

_DROP = {"title", "description", "$defs", "examples"}
_PRESERVE = {"x-kubernetes-preserve-unknown-fields": True}


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    target = dict(defs[ref.rsplit("/", 1)[-1]])
    # keywords next to a $ref (pydantic puts "default" there) win over the definition's
    target.update({k: v for k, v in node.items() if k != "$ref"})
    return target


def structural(node: dict[str, Any], defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Translate one pydantic JSON Schema node (and its children) into a structural schema."""
    if defs is None:
        defs = node.get("$defs", {})
    node = _resolve(node, defs)
    any_of = node.get("anyOf")
    if any_of is not None:
        non_null = [branch for branch in any_of if branch.get("type") != "null"]
        if len(non_null) != 1:
            # a real union: nothing structural can express it
            raise ValueError(f"cannot express anyOf {any_of!r} as a structural schema")
        merged = {k: v for k, v in node.items() if k != "anyOf"}
        merged.update(_resolve(non_null[0], defs))
        translated = structural(merged, defs)
        if len(non_null) != len(any_of):
            translated["nullable"] = True
            if "enum" in translated and translated.get("type") == "string":
                # the API server checks a null against an enum too (nullable or not, null
                # listed or not): the same choice as a pattern, which a null skips
                choices = "|".join(re.escape(value) for value in translated.pop("enum"))
                translated["pattern"] = f"^(?:{choices})$"
        return translated

    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP or (key == "default" and value is None):
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "exclusiveMinimum" and not isinstance(value, bool):
            out["minimum"] = value
            out["exclusiveMinimum"] = True
        elif key == "exclusiveMaximum" and not isinstance(value, bool):
            out["maximum"] = value
            out["exclusiveMaximum"] = True
        elif key == "properties":
            out["properties"] = {name: structural(sub, defs) for name, sub in value.items()}
        elif key == "items":
            out["items"] = structural(value, defs)
        elif key == "additionalProperties":
            if isinstance(value, dict) and value:
                out["additionalProperties"] = structural(value, defs)
            elif value is True or value == {}:
                out.update(_PRESERVE)
            # False: dropped, see the module docstring
        else:
            out[key] = value

    if "type" not in out and "enum" in out:
        out["type"] = "string"
    if "type" not in out:
        # Any: keep whatever JSON the user sent
        out.update(_PRESERVE)
    if out.get("type") == "object" and "properties" in out and "additionalProperties" in out:
        del out["additionalProperties"]
    return out


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    return structural(model.model_json_schema(mode="serialization"))


def _object_schema(
    spec: type[BaseModel], status: type[BaseModel], *, spec_required: bool
) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": model_schema(spec),
            "status": model_schema(status),
        },
    }
    if spec_required:
        schema["required"] = ["spec"]
    return schema


def _column(name: str, path: str, kind: str = "string", priority: int = 0) -> dict[str, Any]:
    column: dict[str, Any] = {"name": name, "type": kind, "jsonPath": path}
    if priority:
        column["priority"] = priority
    return column


_AGE = _column("Age", ".metadata.creationTimestamp", "date")

#: kind -> (plural, scope, spec model, status model, spec required, printer columns, short)
_KINDS: dict[str, tuple[str, str, type[BaseModel], type[BaseModel], bool, list[Any], list[str]]] = {
    "Function": (
        "functions",
        "Namespaced",
        FunctionResourceSpec,
        FunctionCRStatus,
        True,
        [
            _column("Runtime", ".spec.runtime"),
            _column("Phase", ".status.phase"),
            _column("SHA", ".status.observed_sha256"),
            _column("Version", ".spec.code.version"),
            _AGE,
            _column("Image", ".status.image", priority=1),
        ],
        ["fn"],
    ),
    "Trigger": (
        "triggers",
        "Namespaced",
        TriggerSpec,
        TriggerStatus,
        True,
        [
            _column("Type", ".spec.type"),
            _column("Function", ".spec.function"),
            _column("Enabled", ".spec.enabled", "boolean"),
            _column("Phase", ".status.phase"),
            _AGE,
        ],
        ["trig"],
    ),
    "FunctionJob": (
        "functionjobs",
        "Namespaced",
        JobSpec,
        FunctionJobStatus,
        True,
        [
            _column("Function", ".spec.function"),
            _column("Run", ".spec.run_id", "integer"),
            _column("Phase", ".status.phase"),
            _AGE,
        ],
        ["fnjob"],
    ),
    "Tenant": (
        "tenants",
        "Cluster",
        TenantSpec,
        TenantStatus,
        False,
        [
            _column("Plan", ".status.plan"),
            _column("Namespace", ".status.namespace"),
            _column("Phase", ".status.phase"),
            _AGE,
        ],
        [],
    ),
}

KINDS = tuple(_KINDS)


def plural(kind: str) -> str:
    return _KINDS[kind][0]


def render_crd(kind: str, group: str = "sless.kube5s.ru", version: str = "v1") -> dict[str, Any]:
    plural_name, scope, spec, status, spec_required, columns, short = _KINDS[kind]
    names: dict[str, Any] = {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural_name,
        "singular": kind.lower(),
        "categories": ["sless"],
    }
    if short:
        names["shortNames"] = short
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural_name}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": names,
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": columns,
                    "schema": {
                        "openAPIV3Schema": _object_schema(spec, status, spec_required=spec_required)
                    },
                }
            ],
        },
    }


def render_crds(settings: KubernetesSettings | None = None) -> dict[str, dict[str, Any]]:
    """``{file name: CRD}`` for every kind."""
    settings = settings or KubernetesSettings()
    return {
        f"{plural(kind)}.yaml": render_crd(kind, settings.group, settings.version) for kind in KINDS
    }


def to_yaml(document: dict[str, Any]) -> str:
    """YAML with a header; JSON is YAML, and JSON needs no YAML library."""
    import json

    header = "# Generated by `python -m sless.crds` from sless/models/: do not edit.\n"
    return header + json.dumps(document, indent=2, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else DEFAULT_DIR
    target.mkdir(parents=True, exist_ok=True)
    for name, crd in render_crds().items():
        (target / name).write_text(to_yaml(crd))
        print(target / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
