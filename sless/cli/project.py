"""``sless.yaml``: a function's project file, beside its code.

It holds the function spec's fields (``runtime``, ``entrypoint``, ``env``, ``secrets``,
``egress``, ``memory_mb``, ``auth``, ...) plus ``name`` and ``triggers`` (each a trigger
spec with a ``name``; its ``function`` is this one). It is checked against the very models
the API validates with (``sless.models``), so a file that loads here is a body the API
accepts, and every error names the file, the line and the field:
``sless.yaml:7: memory_mb: Input should be less than or equal to 4096``.

pydantic and PyYAML are imported here only, when a command reads a project file: the
other client commands start without them (bench/cli_start.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

FILENAME = "sless.yaml"
#: spec fields the file may not set: the upload sets the code, ``sless traffic`` the split
_NOT_IN_FILE = {"code", "traffic"}


@dataclass(frozen=True)
class Project:
    """What a ``sless.yaml`` says: the function's name (or None), spec and triggers."""

    name: str | None
    spec: dict[str, Any] = field(default_factory=dict)
    #: trigger name → trigger body (``function`` filled in by the caller)
    triggers: dict[str, dict[str, Any]] = field(default_factory=dict)


def load(directory: Path) -> Project | None:
    """The directory's ``sless.yaml``, checked; None when there is none."""
    path = directory / FILENAME
    if not path.is_file():
        return None
    import yaml  # type: ignore[import-untyped]

    text = path.read_text()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f"{mark.line + 1}:" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        raise click.ClickException(f"{FILENAME}:{line} not valid YAML: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise click.ClickException(f"{FILENAME}:1: must be a mapping of the spec's fields")
    errors = _check(data)
    if errors:
        lines = [f"{FILENAME}:{_line(root, loc)}: {where}: {msg}" for loc, where, msg in errors]
        raise click.ClickException("\n".join(lines))
    spec = {k: v for k, v in data.items() if k not in ("name", "triggers")}
    triggers = {
        t["name"]: {k: v for k, v in t.items() if k != "name"} for t in data.get("triggers") or []
    }
    return Project(name=data.get("name"), spec=spec, triggers=triggers)


def _check(data: dict[str, Any]) -> list[tuple[tuple[Any, ...], str, str]]:
    """Every error as (location, dotted field, message), in the file's order."""
    from pydantic import TypeAdapter, ValidationError

    from sless.models import FunctionSpec, Name, TriggerSpec

    errors: list[tuple[tuple[Any, ...], str, str]] = []

    def collect(prefix: tuple[Any, ...], e: ValidationError) -> None:
        for error in e.errors(include_input=False, include_url=False):
            loc = prefix + tuple(error["loc"])
            where = ".".join(str(part) for part in loc) or "(file)"
            errors.append((loc, where, error["msg"].removeprefix("Value error, ")))

    if "name" in data:
        try:
            TypeAdapter(Name).validate_python(data["name"])
        except ValidationError as e:
            collect(("name",), e)
    for key in sorted(_NOT_IN_FILE & data.keys()):
        errors.append(
            ((key,), key, "is not set in sless.yaml (the upload and sless traffic set it)")
        )
    spec = {k: v for k, v in data.items() if k not in ("name", "triggers", *_NOT_IN_FILE)}
    try:
        FunctionSpec.model_validate(spec)
    except ValidationError as e:
        collect((), e)
    triggers = data.get("triggers") or []
    if not isinstance(triggers, list):
        errors.append((("triggers",), "triggers", "must be a list of triggers"))
        triggers = []
    for index, trigger in enumerate(triggers):
        if not isinstance(trigger, dict) or not isinstance(trigger.get("name"), str):
            errors.append((("triggers", index), f"triggers.{index}", "needs a name"))
            continue
        body = {k: v for k, v in trigger.items() if k != "name"}
        body["function"] = "placeholder"  # this function, whatever its name: deploy sets it
        try:
            TypeAdapter(Name).validate_python(trigger["name"])
            TriggerSpec.model_validate(body)
        except ValidationError as e:
            collect(("triggers", index), e)
    return errors


def _line(root: Any, loc: tuple[Any, ...]) -> int:
    """The line of the deepest node of ``loc`` the file has (1-based)."""
    from yaml.nodes import MappingNode, SequenceNode  # type: ignore[import-untyped]

    node = root
    line = 1 if root is None else root.start_mark.line + 1
    for part in loc:
        child = None
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if key.value == str(part):
                    child, line = value, key.start_mark.line + 1
                    break
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line


def merge(project: Project | None, flags: dict[str, Any]) -> dict[str, Any]:
    """The spec to PUT: the file's fields, with the command line's on top."""
    spec = dict(project.spec) if project is not None else {}
    spec.update({k: v for k, v in flags.items() if v is not None})
    return spec
