"""Typo-squatted and desktop-only dependencies in requirements.txt and package.json."""

from __future__ import annotations

import json
from pathlib import Path

from sless.validation.dependencies import check_dependencies, near_miss
from sless.validation.manifests import check_manifests
from sless.validation.report import Verdict


def test_one_edit_from_a_popular_name_is_a_near_miss() -> None:
    assert near_miss("reqeusts", "pypi") == "requests"  # swapped neighbours
    assert near_miss("requets", "pypi") == "requests"  # deletion
    assert near_miss("nunpy", "pypi") == "numpy"  # substitution
    assert near_miss("expres", "npm") == "express"
    assert near_miss("lodahs", "npm") == "lodash"


def test_popular_names_and_distant_ones_pass() -> None:
    for name in ("requests", "Requests", "python_dateutil", "boto3", "boto", "scapy", "dash"):
        assert near_miss(name, "pypi") is None, name
    for name in ("express", "lodash", "my-company-utils", "ws"):
        assert near_miss(name, "npm") is None, name


def test_manifests_report_typosquats_and_desktop_packages(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("# deps\nreqeusts==2.31\npyperclip\nflask>=3\n")
    (tmp_path / "package.json").write_text(
        json.dumps({"dependencies": {"axois": "^1.0.0", "clipboardy": "^2", "pg": "^8"}})
    )
    findings = check_dependencies(tmp_path)
    got = {(f.rule, f.file, f.line) for f in findings}
    assert ("typosquat-dependency", "requirements.txt", 2) in got
    assert ("desktop-only-dependency", "requirements.txt", 3) in got
    assert ("typosquat-dependency", "package.json", 1) in got
    assert ("desktop-only-dependency", "package.json", 1) in got
    assert len(findings) == 4
    stage = check_manifests(tmp_path)
    assert stage.verdict is Verdict.REVIEW


def test_ordinary_manifests_have_no_dependency_findings(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("requests==2.32\npydantic>=2\nboto3\n")
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"axios": "^1"}}))
    assert check_dependencies(tmp_path) == []
