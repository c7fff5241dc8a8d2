"""The committed OpenAPI schema (docs/openapi.json) against the live one.

``python -m tools.openapi.compat write`` writes the live schema to docs/openapi.json;
``check`` fails when the two differ, and lists first the differences that break a client
built from the committed copy: a path, operation, parameter, response or schema property
that is gone (a rename is a removal and an addition), or a parameter that became required.
A change of the API therefore needs the committed copy updated in the same commit, and a
breaking one is named as such in the failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "openapi.json"
_METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def live_schema() -> dict[str, Any]:
    from sless.config import Settings
    from sless.gateway import create_app

    app = create_app(Settings(_env_file=None), "postgresql://unused")  # type: ignore[call-arg]
    schema: dict[str, Any] = app.api.openapi()  # type: ignore[attr-defined]
    return schema


def _facts(schema: dict[str, Any]) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
    """What a client may rely on, and which parameters are required."""
    facts: set[tuple[str, ...]] = set()
    required: set[tuple[str, ...]] = set()
    for path, item in schema.get("paths", {}).items():
        for method, op in item.items():
            if method not in _METHODS:
                continue
            facts.add(("operation", method.upper(), path))
            for param in op.get("parameters", []):
                key = ("parameter", method.upper(), path, param["in"], param["name"])
                facts.add(key)
                if param.get("required"):
                    required.add(key)
            for status in op.get("responses", {}):
                facts.add(("response", method.upper(), path, str(status)))
    for name, component in schema.get("components", {}).get("schemas", {}).items():
        facts.add(("schema", name))
        for prop in component.get("properties", {}):
            facts.add(("property", name, prop))
    return facts, required


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    old_facts, old_required = _facts(old)
    new_facts, new_required = _facts(new)
    changes = [f"removed {' '.join(f[0:1])}: {' '.join(f[1:])}" for f in old_facts - new_facts]
    # a required parameter breaks a client only on an operation that client already calls
    changes += [
        f"now required: {' '.join(f[1:])}"
        for f in new_required - old_required
        if ("operation", f[1], f[2]) in old_facts
    ]
    return sorted(changes)


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "check"
    live = live_schema()
    text = json.dumps(live, indent=2, sort_keys=True) + "\n"
    if command == "write":
        COMMITTED.write_text(text, encoding="utf-8")
        print(f"wrote {COMMITTED.relative_to(ROOT)}")
        return 0
    if command != "check":
        print("usage: python -m tools.openapi.compat [check|write]", file=sys.stderr)
        return 2
    committed = json.loads(COMMITTED.read_text(encoding="utf-8")) if COMMITTED.exists() else {}
    if committed == live:
        return 0
    breaking = breaking_changes(committed, live)
    print("docs/openapi.json differs from the API the code serves.", file=sys.stderr)
    if breaking:
        print("Changes that break clients built from the committed copy:", file=sys.stderr)
        for change in breaking:
            print(f"  - {change}", file=sys.stderr)
    print(
        "If the change is meant, run scripts/openapi write and commit docs/openapi.json with it.",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
