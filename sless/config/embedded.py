"""Embedded mode: the bubblewrap sandbox, dependency builds, and the in-process cron
scheduler, job runner and async queue.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SandboxSettings(BaseModel):
    #: what workers run in: bubblewrap (host kernel, namespaces and seccomp) or gVisor
    #: (``runsc``: a user-space kernel between tenant code and the host's).
    #: ``SLESS_EMBEDDED_ISOLATION`` or ``sless up --isolation``; never a silent fallback
    isolation: Literal["bubblewrap", "gvisor"] = "bubblewrap"
    bwrap: str = "bwrap"
    #: gVisor's ``runsc`` (a name on PATH or a path), executable by the workers' uids
    runsc: str = "runsc"
    #: gVisor platform: ``auto`` takes KVM when a sandbox starts on it, else systrap
    runsc_platform: Literal["auto", "systrap", "kvm", "ptrace"] = "auto"
    #: run functions without bubblewrap (development only; warned on every start)
    unsafe_no_sandbox: bool = False
    #: the idle window: a worker unused this long stops (down to ``min_instances``)
    idle_timeout_s: float = 300.0
    start_timeout_s: float = 20.0
    max_processes: int = 64
    max_open_files: int = 256
    #: connections (CONNECT tunnels, proxied requests) a tenant's functions may hold open
    #: through the egress proxy at once, all of them together, and one function (all its
    #: versions); past either cap a connection is refused with 429 (sless.sandbox.tunnels).
    #: Each holds two of the gateway's descriptors
    egress_tunnels_per_tenant: int = Field(default=256, ge=1, le=65536)
    egress_tunnels_per_function: int = Field(default=128, ge=1, le=65536)
    tmp_size_mb: int = 64
    log_max_bytes: int = 1024 * 1024
    #: bytes a second a tenant's workers may log, after ``log_burst_bytes``: past it their
    #: writes wait (sless.backends.local.logpump), so a flood costs the tenant's time
    log_rate_bytes: int = Field(default=2 * 1024 * 1024, ge=4096)
    log_burst_bytes: int = Field(default=8 * 1024 * 1024, ge=65536)
    #: generic workers kept pre-started per runtime (Python), specialized on a function's
    #: first call instead of a cold start (sless.sandbox.prestarting); 0 turns it off
    prestart_size: int = Field(default=2, ge=0, le=32)
    #: the seccomp filter of every worker (sless.sandbox.seccomp). ``false`` exists only
    #: for bench/ to measure what the filter costs: refused in production, warned otherwise
    seccomp: bool = True
    #: tenants whose pre-started workers are kept (each tenant has its own: a generic
    #: worker runs as one tenant's uid); the least recently used beyond this lose theirs
    prestart_tenants: int = Field(default=16, ge=1, le=1024)
    #: the host uid/gid range the platform owns, like an /etc/subuid entry: namespace n
    #: (in order of first use) runs as uid = gid = ``uid_base + n``. Must not overlap
    #: /etc/subuid, /etc/subgid, /etc/passwd or /etc/group (checked at start). Used when
    #: the gateway runs as root; otherwise every worker runs as the gateway's own uid.
    uid_base: int = Field(default=100_000_000, ge=100_000, le=2**31 - 2**20)
    uid_count: int = Field(default=65_536, ge=1, le=2**20)


class BuildSettings(BaseModel):
    uv: str = "uv"
    npm: str = "npm"
    timeout_s: float = 600.0


class EventsSettings(BaseModel):
    """Cron triggers, jobs and asynchronous invocations in embedded mode:
    ``SLESS_EVENTS_<FIELD>``."""

    #: run the scheduler, the job runner and the queue worker in this gateway process
    enabled: bool = True
    #: how often the scheduler looks for due ticks (and re-reads the triggers)
    scheduler_interval_s: float = 1.0
    #: ticks missed (the gateway was down) are fired late only within this window
    catchup_window_s: float = 300.0
    #: accept a sixth (seconds) cron field: development and tests only, CronJobs have none
    allow_seconds_field: bool = False
    #: how often job runners and queue workers look for work written by other processes
    poll_interval_s: float = 1.0
    #: asynchronous invocations run at once by one gateway process
    queue_concurrency: int = 16
    #: brokers the provider runs for its tenants, each ``host:port`` as a trigger's URL
    #: names it (a JSON list: ``["rabbitmq.internal:5672"]``). Only these may be on
    #: loopback, in a private range or on this machine's own addresses; any other broker
    #: URL naming such an address is refused (``sless.models.reach``, the rule of function
    #: egress). Empty (the default): tenants' brokers must be public
    brokers_allowed: list[str] = Field(default_factory=list)
    #: attempts of an asynchronous invocation before it is dead-lettered
    max_attempts: int = 5
    #: retry backoff: ``retry_base_s * 2**(attempt-1)``, at most ``retry_max_s``
    retry_base_s: float = 1.0
    retry_max_s: float = 300.0
    #: the largest result (response body) stored for a job or an asynchronous invocation
    max_result_bytes: int = 64 * 1024
    #: how long past the function's timeout (a cron tick: past the tick) an asynchronous
    #: call or a tick stays leased to the process that took it; when it runs out (that
    #: process stopped), another takes it over: run if it never started, else recorded
    #: ``interrupted``
    lease_margin_s: float = Field(default=30.0, gt=0)
