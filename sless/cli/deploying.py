"""``sless deploy``, ``versions``, ``rollback`` and ``traffic``: a function's code and
versions.

``deploy`` packs the directory reproducibly (``pack_directory``, also what ``sless
validate`` checks), uploads it as a new version and waits until it is Ready. Its exit
status says whether the code runs: 0 Ready, 1 an error (a failed build...), 3 held for
the provider's review (it does not run until approved), 4 rejected (by validation or by
the review). ``rollback`` waits the same way and exits the same.
"""

from __future__ import annotations

import io
import os
import time
import zipfile
from pathlib import Path
from typing import Any

import click

from sless.cli.client import Client, Response, error_message, make_client
from sless.cli.options import token_option, url_option

#: never packed into an upload
SKIP_DIRS = {
    ".git",
    "__pycache__",
    "node_modules",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
}
_TERMINAL_PHASES = {"Ready", "Failed", "Rejected"}
#: exit status of ``deploy``/``rollback``: the code is held for the provider's review
EXIT_HELD = 3
#: exit status of ``deploy``/``rollback``: the code was rejected (validation or review)
EXIT_REJECTED = 4


def pack_directory(directory: Path) -> bytes:
    """Zip a function directory reproducibly: sorted entries, fixed timestamps."""
    if not directory.is_dir():
        raise click.ClickException(f"{directory} is not a directory")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for root, dirs, files in os.walk(directory):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for filename in sorted(files):
                path = Path(root) / filename
                if path.is_symlink() or not path.is_file():
                    continue
                info = zipfile.ZipInfo(str(path.relative_to(directory)), (1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o100644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def detect_runtime(directory: Path) -> str:
    if (directory / "handler.py").exists():
        return "python3.11"
    if (directory / "handler.js").exists():
        return "nodejs20"
    raise click.ClickException(
        "cannot tell the runtime (no handler.py or handler.js): pass --runtime"
    )


def print_report(report: dict[str, Any]) -> None:
    click.echo(f"validation verdict: {report.get('verdict')}", err=True)
    for finding in report.get("findings", []):
        where = finding.get("file") or ""
        if finding.get("line"):
            where += f":{finding['line']}"
        click.echo(
            f"  [{finding.get('source')}] {finding.get('rule')}: {finding.get('message')}"
            + (f" ({where})" if where else ""),
            err=True,
        )
        if finding.get("evidence"):
            click.echo(f"      evidence: {finding['evidence']}", err=True)


@click.command()
@click.argument(
    "directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--name", "-n", help="function name (DNS label; default: sless.yaml's name, or the folder's)"
)
@click.option(
    "--runtime", "-r", type=click.Choice(["python3.11", "nodejs20"]), help="default: detected"
)
@click.option("--entrypoint", help="module.function (default handler.handle)")
@click.option("--env", "-e", multiple=True, help="KEY=VALUE environment variable (repeatable)")
@click.option(
    "--secret",
    "-s",
    "secrets",
    multiple=True,
    help="NAME=ENV: give secret NAME (sless secret put NAME) to the function as $ENV (repeatable)",
)
@click.option("--memory", "memory_mb", type=int, help="memory limit in MiB")
@click.option("--timeout", "timeout_s", type=float, help="timeout in seconds")
@click.option(
    "--concurrency", type=int, help="calls one instance serves at once (the scaling target)"
)
@click.option("--min-instances", type=int, help="instances kept warm (default 0)")
@click.option(
    "--max-instances",
    type=int,
    help="instances the function may scale to (default 4; at most the tenant's quota)",
)
@click.option("--auth", type=click.Choice(["public", "token"]), help="who may call /fn/...")
@click.option(
    "--traffic",
    type=click.IntRange(0, 100),
    help="percent of calls for the new version (a canary); the previous version gets the rest",
)
@click.option("--wait/--no-wait", default=True, show_default=True, help="wait until Ready")
@click.option("--wait-timeout", default=600.0, show_default=True, help="seconds to wait")
@url_option
@token_option
def deploy(
    directory: Path,
    name: str | None,
    env: tuple[str, ...],
    secrets: tuple[str, ...],
    traffic: int | None,
    wait: bool,
    wait_timeout: float,
    url: str | None,
    token: str | None,
    **flags: Any,
) -> None:
    """Create or update a function from DIRECTORY (default: this folder) and upload its
    code: a new version.

    The folder's sless.yaml, when there is one, gives the spec, the name and the
    triggers; the options override it. With --traffic N the new version gets N % of the
    calls, the previous one the rest. When the first upload of a function this command
    created is refused, the function is deleted again.

    \b
    Exit status: 0 Ready, 1 an error (e.g. a failed build),
      3  the code is held for the provider's review (it does not run until approved),
      4  the code was rejected, by validation or by the provider's review"""
    from sless.cli import project as projects

    project = projects.load(directory)
    name = name or (project.name if project else None) or directory.resolve().name
    spec = projects.merge(project, {**flags, **env_pairs(env, secrets)})
    if "runtime" not in spec:
        spec["runtime"] = detect_runtime(directory)
    client = make_client(url, token)
    path = client.ns_path(f"functions/{name}")
    created = client.request("PUT", path, json=spec)
    if created.status_code >= 400:
        raise click.ClickException(error_message(created))
    archive = pack_directory(directory)
    click.echo(f"Uploading {len(archive)} bytes...", err=True)
    response = client.request(
        "POST",
        path + "/upload",
        content=archive,
        headers={"Content-Type": "application/zip"},
        params={"traffic": traffic} if traffic is not None else None,
    )
    if response.status_code >= 400 and created.status_code == 201:
        # nothing ever served: leave no function behind that only says Pending
        client.request("DELETE", path)
        click.echo(f"{name}: the first upload was refused; the function is removed", err=True)
    _raise_for_upload(response)
    result = response.json()
    click.echo(
        f"Uploaded sha256 {result['sha256'][:12]} as {result.get('version')};"
        f" phase {result['phase']}",
        err=True,
    )
    if wait or result["phase"] in ("Validating", "Rejected"):
        _report_ready(name, _wait_for(client, path, wait_timeout))
    if project is not None:
        for trigger_name, trigger in project.triggers.items():
            client.call(
                "PUT",
                client.ns_path(f"triggers/{trigger_name}"),
                json={**trigger, "function": name},
            )
            click.echo(f"trigger {trigger_name}: {trigger['type']}", err=True)


def env_pairs(env: tuple[str, ...], secrets: tuple[str, ...]) -> dict[str, Any]:
    """``--env`` and ``--secret`` as spec fields (absent when not given)."""
    out: dict[str, Any] = {}
    if env:
        pairs = [item.partition("=") for item in env]
        if any(not sep for _, sep, _ in pairs):
            raise click.ClickException("--env takes KEY=VALUE")
        out["env"] = {k: v for k, _, v in pairs}
    if secrets:
        refs = [item.partition("=") for item in secrets]
        if any(not sep or not secret or not variable for secret, sep, variable in refs):
            raise click.ClickException("--secret takes NAME=ENV, e.g. dbpass=DB_PASSWORD")
        out["secrets"] = [{"name": secret, "env": variable} for secret, _, variable in refs]
    return out


def _raise_for_upload(response: Response) -> None:
    """A refused upload: the validation report and exit 4, or the error in one line."""
    if response.status_code < 400:
        return
    error = response.json().get("error", {}) if _is_json(response) else {}
    details = error.get("details")
    if response.status_code == 422 and isinstance(details, dict) and "verdict" in details:
        print_report(details)
        click.echo(f"Error: {error['message']}", err=True)
        raise SystemExit(EXIT_REJECTED)
    raise click.ClickException(error_message(response))


def _is_json(response: Response) -> bool:
    return str(response.headers.get("content-type", "")).startswith("application/json")


def _report_ready(name: str, function: dict[str, Any]) -> None:
    """Say what serves; exit ``EXIT_HELD``/``EXIT_REJECTED`` when the code does not run."""
    phase = function["status"]["phase"]
    split = function["spec"].get("traffic") or []
    if split and phase == "Ready":
        shares = ", ".join(f"{t['version']} {t['percent']}%" for t in split)
        click.echo(f"traffic: {shares}")
    if phase == "Ready":
        click.echo(f"{name} is Ready: {function['url']}")
        return
    serving = function["status"].get("version")
    still = f"; {serving} keeps serving" if serving else ""
    if phase == "Validating":
        click.echo(f"{name} is held for review by the provider before it runs{still}")
        raise SystemExit(EXIT_HELD)
    if phase == "Rejected":
        click.echo(f"{name} is Rejected: {function['status']['message']}{still}", err=True)
        raise SystemExit(EXIT_REJECTED)
    raise click.ClickException(f"{name} is {phase}: {function['status']['message']}")


@click.command()
@click.argument("name")
@url_option
@token_option
def versions(name: str, url: str | None, token: str | None) -> None:
    """List the versions of function NAME, newest first."""
    client = make_client(url, token)
    items = client.list_all(client.ns_path(f"functions/{name}/versions"), "versions")
    click.echo(f"{'VERSION':<9} {'TRAFFIC':>7}  {'SHA256':<12} {'STATE':<9} {'CREATED':<20} BY")
    for v in items:
        mark = "*" if v["current"] else " "
        created = (v.get("created_at") or "")[:19].replace("T", " ")
        click.echo(
            f"{v['version'] + mark:<9} {str(v['percent']) + '%':>7}  {v['sha256'][:12]:<12}"
            f" {v['state']:<9} {created:<20} {v['created_by']}"
        )
    click.echo("* current version", err=True)


@click.command()
@click.argument("name")
@click.argument("version")
@click.option("--wait/--no-wait", default=True, show_default=True, help="wait until Ready")
@click.option("--wait-timeout", default=600.0, show_default=True, help="seconds to wait")
@url_option
@token_option
def rollback(
    name: str, version: str, wait: bool, wait_timeout: float, url: str | None, token: str | None
) -> None:
    """Serve VERSION (e.g. v3) of function NAME again, with no traffic split (no rebuild)."""
    client = make_client(url, token)
    path = client.ns_path(f"functions/{name}")
    client.call("POST", path + "/rollback", json={"version": version})
    click.echo(f"{name}: rolling back to {version}", err=True)
    if wait:
        _report_ready(name, _wait_for(client, path, wait_timeout))


@click.command()
@click.argument("name")
@click.argument("shares", nargs=-1, required=True)
@url_option
@token_option
def traffic(name: str, shares: tuple[str, ...], url: str | None, token: str | None) -> None:
    """Split the calls of function NAME between versions: SHARES are VERSION=PERCENT
    (e.g. v4=90 v5=10, adding up to 100); a single CURRENT=100 clears the split."""
    client = make_client(url, token)
    split = []
    for share in shares:
        version, sep, percent = share.partition("=")
        if not sep or not percent.isdigit():
            raise click.ClickException("shares are VERSION=PERCENT, e.g. v4=90 v5=10")
        split.append({"version": version, "percent": int(percent)})
    path = client.ns_path(f"functions/{name}")
    function = client.call("GET", path)
    spec = {k: v for k, v in function["spec"].items() if k != "code"}
    if len(split) == 1 and split[0]["version"] == function.get("version"):
        split = []
    spec["traffic"] = split
    response = client.request(
        "PUT", path, json=spec, headers={"If-Match": f'"{function["resource_version"]}"'}
    )
    if response.status_code >= 400:
        from sless.cli.client import error_message

        raise click.ClickException(error_message(response))
    shares_text = ", ".join(f"{t['version']} {t['percent']}%" for t in split) or "no split"
    click.echo(f"{name}: traffic {shares_text}")


def _wait_for(client: Client, path: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last = None
    while True:
        function: dict[str, Any] = client.call("GET", path)
        phase = function["status"]["phase"]
        message = function["status"].get("message") or ""
        if message.lower() == phase.lower():
            message = ""  # "Building: building" says nothing more than "Building"
        progress = (phase, message)
        if progress != last:  # a new phase, or why it waits ("waiting for a node: ...")
            click.echo(f"  phase: {phase}" + (f": {message}" if message else ""), err=True)
            last = progress
        if phase in _TERMINAL_PHASES or phase == "Validating":
            return function
        if time.monotonic() > deadline:
            raise click.ClickException(f"still {phase} after {timeout:.0f} s")
        time.sleep(0.3)
