"""``sless validate``: the upload pipeline on a local directory or zip, no server needed."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import tempfile
from pathlib import Path

from sless.config import Settings
from sless.validation import Report, Validator


def validate_path(settings: Settings, path: Path, *, runtime: str, entrypoint: str) -> Report:
    from sless.cli.deploying import pack_directory

    data = path.read_bytes() if path.is_file() else pack_directory(path)
    sha256 = hashlib.sha256(data).hexdigest()
    # one upload: a resident semgrep would only add its start-up
    one_shot = settings.validation.model_copy(update={"semgrep_resident": False})
    validator = Validator(one_shot, settings.llm)
    scratch = Path(tempfile.mkdtemp(prefix="sless-validate-"))
    try:
        return asyncio.run(
            validator.validate_archive(
                data, scratch / "code", sha256=sha256, runtime=runtime, entrypoint=entrypoint
            )
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
