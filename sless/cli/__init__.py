"""The ``sless`` command.

Every failure is one line on stderr and a non-zero exit status.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import click

from sless.cli import auditing, events, invocations, jobs, secrets, triggers
from sless.cli.client import Client, load_config, make_admin_client, make_client, save_config
from sless.cli.options import load_settings, token_option, url_option

#: never packed into an upload
_SKIP_DIRS = {
    ".git",
    "__pycache__",
    "node_modules",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
}
_TERMINAL_PHASES = {"Ready", "Failed", "Rejected"}


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sless")
def main() -> None:
    """sless: a security-hardened, multi-tenant serverless platform."""


# -- server ---------------------------------------------------------------------------


@main.command()
@click.option(
    "--data-dir", type=click.Path(path_type=Path), help="state directory (SLESS_DATA_DIR)"
)
@click.option("--host", help="address to listen on (default 127.0.0.1)")
@click.option("--port", type=int, help="port to listen on (default 8080)")
@click.option(
    "--unsafe-no-sandbox",
    is_flag=True,
    help="run functions without bubblewrap (development only; never with untrusted code)",
)
def up(data_dir: Path | None, host: str | None, port: int | None, unsafe_no_sandbox: bool) -> None:
    """Start the platform in embedded mode: PostgreSQL, gateway and reconciler.

    Uses SLESS_DATABASE_URL instead of the embedded PostgreSQL when set. The provider
    admin token comes from SLESS_ADMIN_TOKEN, or is generated and printed once on the
    first start. Ctrl-C stops it cleanly.
    """
    from sless.cli.server import apply_overrides, run_up

    settings = apply_overrides(
        load_settings(),
        data_dir=data_dir,
        host=host,
        port=port,
        unsafe_no_sandbox=unsafe_no_sandbox,
    )
    run_up(settings)


@main.command()
def operator() -> None:
    """Run the Kubernetes operator (kopf): builds, deploys and cleans up functions.

    Reads the same SLESS_* settings as the gateway; SLESS_KUBERNETES_KUBECONFIG points at
    the cluster (default: in-cluster, then ~/.kube/config). Run one replica, or several
    with SLESS_KUBERNETES_OPERATOR_PEERING (kopf peering: one is active, the others wait).
    """
    from sless.operator import run_operator

    run_operator(load_settings())


# -- session --------------------------------------------------------------------------


@main.command()
@click.option("--url", default="http://127.0.0.1:8080", show_default=True, help="gateway URL")
@click.option("--token", prompt=True, hide_input=True, help="your tenant token")
def login(url: str, token: str) -> None:
    """Store the gateway URL and your token (file mode 0600)."""
    client = Client(url, token)
    me = client.call("GET", "/v1/whoami")
    config = load_config()
    config.update(url=url, token=token)
    path = save_config(config)
    who = me.get("tenant") or "provider admin"
    click.echo(f"Logged in to {url} as {who} (namespace {me.get('namespace')}); saved to {path}")


@main.command()
@url_option
@token_option
def whoami(url: str | None, token: str | None) -> None:
    """Show the tenant and namespace of your token."""
    me = make_client(url, token).call("GET", "/v1/whoami")
    click.echo(f"tenant: {me.get('tenant')}\nnamespace: {me.get('namespace')}")


# -- functions ------------------------------------------------------------------------


def pack_directory(directory: Path) -> bytes:
    """Zip a function directory reproducibly: sorted entries, fixed timestamps."""
    if not directory.is_dir():
        raise click.ClickException(f"{directory} is not a directory")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for root, dirs, files in os.walk(directory):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            for filename in sorted(files):
                path = Path(root) / filename
                if path.is_symlink() or not path.is_file():
                    continue
                info = zipfile.ZipInfo(str(path.relative_to(directory)), (1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o100644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def _detect_runtime(directory: Path) -> str:
    if (directory / "handler.py").exists():
        return "python3.11"
    if (directory / "handler.js").exists():
        return "nodejs20"
    raise click.ClickException(
        "cannot tell the runtime (no handler.py or handler.js): pass --runtime"
    )


def _print_report(report: dict[str, Any]) -> None:
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


@main.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--name", "-n", required=True, help="function name (DNS label)")
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
    name: str,
    runtime: str | None,
    entrypoint: str | None,
    env: tuple[str, ...],
    secrets: tuple[str, ...],
    memory_mb: int | None,
    timeout_s: float | None,
    concurrency: int | None,
    min_instances: int | None,
    max_instances: int | None,
    auth: str | None,
    traffic: int | None,
    wait: bool,
    wait_timeout: float,
    url: str | None,
    token: str | None,
) -> None:
    """Create or update function NAME from DIRECTORY and upload its code: a new version.

    With --traffic N the new version gets N % of the calls and the version that was
    current the rest (promote it later with `sless traffic`, or `sless rollback`)."""
    client = make_client(url, token)
    spec: dict[str, Any] = {"runtime": runtime or _detect_runtime(directory)}
    for key, value in (
        ("entrypoint", entrypoint),
        ("memory_mb", memory_mb),
        ("timeout_s", timeout_s),
        ("concurrency", concurrency),
        ("min_instances", min_instances),
        ("max_instances", max_instances),
        ("auth", auth),
    ):
        if value is not None:
            spec[key] = value
    if env:
        pairs = [item.partition("=") for item in env]
        if any(not sep for _, sep, _ in pairs):
            raise click.ClickException("--env takes KEY=VALUE")
        spec["env"] = {k: v for k, _, v in pairs}
    if secrets:
        refs = [item.partition("=") for item in secrets]
        if any(not sep or not secret or not variable for secret, sep, variable in refs):
            raise click.ClickException("--secret takes NAME=ENV, e.g. dbpass=DB_PASSWORD")
        spec["secrets"] = [{"name": secret, "env": variable} for secret, _, variable in refs]
    path = client.ns_path(f"functions/{name}")
    client.call("PUT", path, json=spec)
    archive = pack_directory(directory)
    click.echo(f"Uploading {len(archive)} bytes...", err=True)
    response = client.request(
        "POST",
        path + "/upload",
        content=archive,
        headers={"Content-Type": "application/zip"},
        params={"traffic": traffic} if traffic is not None else None,
    )
    if response.status_code == 422 and "details" in response.json().get("error", {}):
        error = response.json()["error"]
        if isinstance(error["details"], dict) and "verdict" in error["details"]:
            _print_report(error["details"])
        raise click.ClickException(error["message"])
    if response.status_code >= 400:
        from sless.cli.client import error_message

        raise click.ClickException(error_message(response))
    result = response.json()
    click.echo(
        f"Uploaded sha256 {result['sha256'][:12]} as {result.get('version')};"
        f" phase {result['phase']}",
        err=True,
    )
    if not wait:
        return
    _report_ready(name, _wait_for(client, path, wait_timeout))


def _report_ready(name: str, function: dict[str, Any]) -> None:
    phase = function["status"]["phase"]
    if phase == "Ready":
        click.echo(f"{name} is Ready: {function['url']}")
    elif phase == "Validating":
        click.echo(f"{name} is held for review by the provider before it runs")
    else:
        raise click.ClickException(f"{name} is {phase}: {function['status']['message']}")
    split = function["spec"].get("traffic") or []
    if split:
        shares = ", ".join(f"{t['version']} {t['percent']}%" for t in split)
        click.echo(f"traffic: {shares}")


@main.command()
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


@main.command()
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


@main.command()
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
        if phase != last:
            click.echo(f"  phase: {phase}", err=True)
            last = phase
        if phase in _TERMINAL_PHASES or phase == "Validating":
            return function
        if time.monotonic() > deadline:
            raise click.ClickException(f"still {phase} after {timeout:.0f} s")
        time.sleep(0.3)


@main.command("ls")
@url_option
@token_option
def list_functions(url: str | None, token: str | None) -> None:
    """List your functions."""
    client = make_client(url, token)
    functions = client.list_all(client.ns_path("functions"), "functions")
    if not functions:
        click.echo("no functions")
        return
    click.echo(f"{'NAME':<30} {'RUNTIME':<11} {'PHASE':<11} URL")
    for f in functions:
        click.echo(
            f"{f['name']:<30} {f['spec']['runtime']:<11} {f['status']['phase']:<11} {f['url']}"
        )


@main.command()
@click.argument("name")
@click.option("--data", "-d", help="JSON body to send (POST); without it, a GET")
@click.option("--path", "subpath", default="", help="sub-path after the function's URL")
@click.option(
    "--async", "is_async", is_flag=True, help="queue the call: print its invocation id at once"
)
@url_option
@token_option
def invoke(
    name: str, data: str | None, subpath: str, is_async: bool, url: str | None, token: str | None
) -> None:
    """Call function NAME through its public URL and print the answer."""
    client = make_client(url, token)
    target = f"/fn/{client.namespace}/{name}/{subpath.lstrip('/')}".rstrip("/")
    extra = {"X-Sless-Async": "true"} if is_async else {}
    if data is not None:
        try:
            json.loads(data)
        except ValueError as e:
            raise click.ClickException(f"--data is not valid JSON: {e}") from None
        response = client.request(
            "POST", target, content=data, headers={"Content-Type": "application/json", **extra}
        )
    else:
        response = client.request("GET", target, headers=extra)
    click.echo(response.text)
    if response.status_code >= 400:
        sys.exit(1)


@main.command()
@click.argument("name")
@click.option("--tail", default=64 * 1024, show_default=True, help="bytes from the end")
@url_option
@token_option
def logs(name: str, tail: int, url: str | None, token: str | None) -> None:
    """Print the recent output (stdout and stderr) of function NAME."""
    client = make_client(url, token)
    click.echo(
        client.call("GET", client.ns_path(f"functions/{name}/logs"), params={"tail": tail}),
        nl=False,
    )


@main.command("rm")
@click.argument("name")
@url_option
@token_option
def remove(name: str, url: str | None, token: str | None) -> None:
    """Delete function NAME and everything it created."""
    client = make_client(url, token)
    client.call("DELETE", client.ns_path(f"functions/{name}"))
    click.echo(f"deleted {name}")


# -- validation -----------------------------------------------------------------------


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--runtime", "-r", type=click.Choice(["python3.11", "nodejs20"]), required=True)
@click.option("--entrypoint", default="handler.handle", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def validate(path: Path, runtime: str, entrypoint: str, as_json: bool) -> None:
    """Run the upload validation on a directory or zip.

    Exit status: 0 allow, 1 review, 2 reject.
    """
    from sless.cli.validating import validate_path

    report = validate_path(load_settings(), path, runtime=runtime, entrypoint=entrypoint)
    if as_json:
        _print_json(report.model_dump(mode="json"))
    else:
        _print_report(report.model_dump(mode="json"))
    sys.exit({"allow": 0, "review": 1, "reject": 2}[report.verdict.value])


# -- admin ----------------------------------------------------------------------------


@main.group()
def admin() -> None:
    """Provider administration (needs SLESS_ADMIN_TOKEN)."""


@admin.group()
def tenant() -> None:
    """Onboard, list and delete tenants."""


admin_token_option = click.option("--admin-token", help="provider admin token (SLESS_ADMIN_TOKEN)")


@tenant.command("create")
@click.argument("name")
@url_option
@admin_token_option
def tenant_create(name: str, url: str | None, admin_token: str | None) -> None:
    """Create tenant NAME and print its first token (shown once)."""
    data = make_admin_client(url, admin_token).call(
        "POST", "/v1/admin/tenants", json={"name": name}
    )
    click.echo(f"tenant: {data['tenant']}\nnamespace: {data['namespace']}\ntoken: {data['token']}")


@tenant.command("list")
@url_option
@admin_token_option
def tenant_list(url: str | None, admin_token: str | None) -> None:
    """List tenants."""
    client = make_admin_client(url, admin_token)
    for t in client.list_all("/v1/admin/tenants", "tenants"):
        click.echo(f"{t['tenant']:<30} {t['namespace']}")


@tenant.command("delete")
@click.argument("name")
@url_option
@admin_token_option
def tenant_delete(name: str, url: str | None, admin_token: str | None) -> None:
    """Delete tenant NAME with all its functions and tokens."""
    make_admin_client(url, admin_token).call("DELETE", f"/v1/admin/tenants/{name}")
    click.echo(f"deleted tenant {name}")


@tenant.command("token")
@click.argument("name")
@click.option("--description", default="", help="what the token is for")
@url_option
@admin_token_option
def tenant_token(name: str, description: str, url: str | None, admin_token: str | None) -> None:
    """Mint another token for tenant NAME (shown once)."""
    data = make_admin_client(url, admin_token).call(
        "POST", f"/v1/admin/tenants/{name}/tokens", json={"description": description}
    )
    click.echo(f"token id: {data['id']}\ntoken: {data['token']}")


for _command in [
    events.events,
    triggers.trigger,
    jobs.job,
    secrets.secret,
    invocations.invocations,
    invocations.invocation,
]:
    main.add_command(_command)
main.add_command(auditing.audit)
admin.add_command(auditing.admin_audit)
