"""The ``sless`` command.

Every failure is one line on stderr and a non-zero exit status.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from sless.cli import admin, auditing, deploying, events, invocations, jobs, secrets, triggers
from sless.cli.client import Client, load_config, make_client, save_config
from sless.cli.options import Group, load_settings, token_option, url_option


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
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
@click.option(
    "--isolation",
    type=click.Choice(["bubblewrap", "gvisor"]),
    help="what functions run in (default: SLESS_EMBEDDED_ISOLATION, else bubblewrap);"
    " gvisor needs runsc (SLESS_SANDBOX_RUNSC) and refuses to start without it",
)
def up(
    data_dir: Path | None,
    host: str | None,
    port: int | None,
    unsafe_no_sandbox: bool,
    isolation: str | None,
) -> None:
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
        isolation=isolation,
    )
    try:
        run_up(settings)
    except KeyboardInterrupt:  # before PostgreSQL was up: nothing to stop
        click.echo("Interrupted while starting: sless stopped", err=True)
        sys.exit(130)


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
        phase, reason = shown_phase(f)
        where = f"({reason})" if reason else f["url"]
        click.echo(f"{f['name']:<30} {f['spec']['runtime']:<11} {phase:<11} {where}")


def shown_phase(function: dict[str, Any]) -> tuple[str, str]:
    """The phase to show, and why when the code does not run (the server's message: it
    decides, ``sless.functions.uploading.refused_phase``, that a function whose only upload
    validation refused is ``Rejected``)."""
    status = function["status"]
    phase = str(status["phase"])
    if phase in ("Rejected", "Failed") and status.get("message"):
        return phase, str(status["message"])
    return phase, ""


@main.command()
@click.argument("name")
@click.option(
    "--data", "-d", help="body to send (POST): JSON text, @FILE, or - for stdin; none: a GET"
)
@click.option("--header", "-H", "headers", multiple=True, help="'Name: value' (repeatable)")
@click.option("--path", "subpath", default="", help="sub-path after the function's URL")
@click.option(
    "--async", "is_async", is_flag=True, help="queue the call: print its invocation id at once"
)
@click.option("--wait", is_flag=True, help="with --async: wait for the call to end, print it")
@click.option("--wait-timeout", default=600.0, show_default=True, help="seconds --wait waits")
@click.option(
    "--retries",
    type=click.IntRange(min=0, max=9999),
    help="with --async: retry a failing call at most N times (capped by the platform)",
)
@url_option
@token_option
def invoke(
    name: str,
    data: str | None,
    headers: tuple[str, ...],
    subpath: str,
    is_async: bool,
    wait: bool,
    wait_timeout: float,
    retries: int | None,
    url: str | None,
    token: str | None,
) -> None:
    """Call function NAME through its public URL and print the answer.

    A body that is JSON is sent as application/json, anything else as text/plain
    (unless -H sets Content-Type)."""
    from sless.cli.invoking import call

    call(
        make_client(url, token),
        name,
        subpath=subpath,
        body=data,
        headers=headers,
        is_async=is_async,
        wait_timeout=wait_timeout if wait else None,
        retries=retries,
    )


@main.command()
@click.argument("name")
@click.option("--tail", "-n", "lines", default=100, show_default=True, help="lines from the end")
@click.option("--follow", "-f", is_flag=True, help="keep printing new output (Ctrl-C stops)")
@click.option(
    "--since",
    help="only output written in the last 10m, 2h, 30s, 1d, or since an ISO 8601 time",
)
@url_option
@token_option
def logs(
    name: str, lines: int, follow: bool, since: str | None, url: str | None, token: str | None
) -> None:
    """Print the recent output (stdout and stderr) of function NAME.

    With -f, the API's log stream: each new line after the time the gateway read it
    (UTC) and the invocation id it names, if any."""
    from sless.cli.following import follow_logs, last_lines, since_time

    client = make_client(url, token)
    start = since_time(since) if since else None
    if follow:
        follow_logs(client, name, lines, since=start)
    else:
        click.echo(last_lines(client, name, lines, since=start), nl=False)


@main.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
@url_option
@token_option
def describe(name: str, as_json: bool, url: str | None, token: str | None) -> None:
    """Show function NAME: spec, status, versions and traffic, triggers, instances, and
    the last hour's invocations (count, 5xx, p50/p99)."""
    from sless.cli.describing import describe as show

    show(make_client(url, token), name, as_json=as_json)


@main.command("rm")
@click.argument("name")
@url_option
@token_option
def remove(name: str, url: str | None, token: str | None) -> None:
    """Delete function NAME and everything it created."""
    client = make_client(url, token)
    client.call("DELETE", client.ns_path(f"functions/{name}"))
    click.echo(f"deleted {name}")


@main.command()
@click.argument("name")
@click.option(
    "--runtime",
    "-r",
    type=click.Choice(["python3.11", "nodejs20"]),
    default="python3.11",
    show_default=True,
)
@click.option(
    "--template",
    "-t",
    type=click.Choice(
        ["http", "cron", "rabbitmq", "async", "lambda", "openfaas", "knative", "asgi", "wsgi"]
    ),
    default="http",
    show_default=True,
    help="http: answers GET ?name=; cron: a schedule calls it; rabbitmq: a queue does;"
    " async: slow work called with --async; lambda, openfaas, knative, asgi, wsgi: a"
    " function written to that contract (docs/migrating.md)",
)
@click.option("--dir", "directory", type=click.Path(path_type=Path), help="default: ./NAME")
def new(name: str, runtime: str, template: str, directory: Path | None) -> None:
    """Write a working function NAME: handler, sless.yaml, a test and a README."""
    from sless.cli import peer_templates, scaffolding

    target = directory or Path(name)
    peer = template in peer_templates.INTERFACE_TEMPLATES
    write = peer_templates.write if peer else scaffolding.write
    for path in write(target, name, runtime, template):
        click.echo(f"  {path}")
    click.echo(f"Created {name} ({runtime}, {template}). Next: cd {target} && sless deploy")


@main.command()
@click.argument(
    "directory", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--port", "-p", default=8081, show_default=True, help="local port to serve on")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to serve on")
@click.option("--name", "-n", help="default: sless.yaml's name, or the folder's")
@click.option("--runtime", "-r", type=click.Choice(["python3.11", "nodejs20"]))
@click.option("--memory", "memory_mb", type=int, help="memory limit in MiB")
@click.option("--timeout", "timeout_s", type=float, help="timeout in seconds")
@click.option("--env", "-e", multiple=True, help="KEY=VALUE environment variable (repeatable)")
def dev(directory: Path, port: int, host: str, env: tuple[str, ...], **flags: str | None) -> None:
    """Serve a function locally in the platform's sandbox; every save reloads it.

    The function of DIRECTORY (default: this folder) runs in the platform's sandbox and
    runtime server, with its spec's limits and egress; every save reloads it (after the
    upload validation), and each call and its output print here.

    Calls: http://HOST:PORT/PATH, as /fn/NAMESPACE/NAME/PATH once deployed. A secret
    of the spec ({name, env}) takes $ENV from this shell. Ctrl-C stops."""
    from sless.cli.deploying import env_pairs
    from sless.cli.developing import run_dev

    run_dev(load_settings(), directory, host=host, port=port, flags={**flags, **env_pairs(env, ())})


# -- validation -----------------------------------------------------------------------


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--runtime", "-r", type=click.Choice(["python3.11", "nodejs20"]), required=True)
@click.option("--entrypoint", default="handler.handle", show_default=True)
@click.option(
    "--spec",
    "spec_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="the function's spec as JSON (its egress and secrets tell the detonation what the"
    " code may do; without it, any network use is held for review)",
)
@click.option("--json", "as_json", is_flag=True, help="print the report (with evidence) as JSON")
def validate(
    path: Path, runtime: str, entrypoint: str, spec_file: Path | None, as_json: bool
) -> None:
    """Run the upload validation on a directory or zip.

    Exit status: 0 allow, 1 review, 2 reject.
    """
    from sless.cli.validating import validate_path

    report = validate_path(
        load_settings(), path, runtime=runtime, entrypoint=entrypoint, spec_file=spec_file
    )
    if as_json:
        _print_json(report.model_dump(mode="json"))
    else:
        deploying.print_report(report.model_dump(mode="json"))
    sys.exit({"allow": 0, "review": 1, "reject": 2}[report.verdict.value])


for _command in [
    deploying.deploy,
    deploying.versions,
    deploying.rollback,
    deploying.traffic,
    events.events,
    triggers.trigger,
    jobs.job,
    secrets.secret,
    invocations.invocations,
    invocations.invocation,
]:
    main.add_command(_command)
main.add_command(auditing.audit)
main.add_command(admin.admin)
admin.admin.add_command(auditing.admin_audit)
