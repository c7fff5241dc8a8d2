"""``sless validate``: the upload pipeline on a local directory or zip, no server needed."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import tempfile
from pathlib import Path

import click

from sless.config import Settings
from sless.models import FunctionSpec
from sless.validation import Detonation, Report, Validator


def validate_path(
    settings: Settings,
    path: Path,
    *,
    runtime: str,
    entrypoint: str,
    spec_file: Path | None = None,
) -> Report:
    from sless.cli.deploying import pack_directory

    detonation = None
    if spec_file is not None:
        try:
            spec = FunctionSpec.model_validate_json(spec_file.read_bytes())
        except ValueError as e:
            raise click.ClickException(f"{spec_file}: not a function spec: {e}") from None
        detonation = Detonation.from_spec(spec)

    data = path.read_bytes() if path.is_file() else pack_directory(path)
    sha256 = hashlib.sha256(data).hexdigest()
    # one upload: a resident semgrep would only add its start-up
    one_shot = settings.validation.model_copy(update={"semgrep_resident": False})
    validator = Validator(one_shot, settings.llm)
    scratch = Path(tempfile.mkdtemp(prefix="sless-validate-"))
    try:
        return asyncio.run(
            validator.validate_archive(
                data,
                scratch / "code",
                sha256=sha256,
                runtime=runtime,
                entrypoint=entrypoint,
                detonation=detonation,
            )
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
