"""build_command, argument by argument: pure, no I/O."""

from __future__ import annotations

from pathlib import Path

import pytest

from sless.sandbox import HostIds, HostLayout, Limits, SandboxSpec, address_space_mb, build_command

HOST = HostLayout(
    python_prefix=Path("/opt/pyenv/versions/3.11.7"),
    node=Path("/usr/bin/node"),
    prlimit=Path("/usr/bin/prlimit"),
    root_symlinks={"/lib": "usr/lib", "/bin": "usr/bin"},
    root_dirs=("/lib64",),
)
RUNTIMES = Path("/srv/sless/runtimes")


def make_spec(**overrides: object) -> SandboxSpec:
    fields: dict[str, object] = {
        "name": "ns1.fn1.vdeadbeef.0",
        "runtime": "python3.11",
        "code_dir": Path("/data/code/abc"),
        "deps_dir": Path("/data/deps/abc"),
        "entrypoint": "handler.handle",
        "env": {"GREETING": "hi", "DB_PASSWORD": "s3cret"},
        "socket_dir": Path("/run/sless/ns1.fn1.vdeadbeef.0"),
        "log_file": Path("/data/logs/fn1.log"),
        "limits": Limits(
            memory_mb=128, cpu_seconds=60, max_processes=32, max_open_files=128, tmp_size_mb=16
        ),
        "network": False,
        "timeout_s": 10.0,
        "concurrency": 2,
        "function": "fn1",
        "namespace": "ns1",
    }
    fields.update(overrides)
    return SandboxSpec(**fields)  # type: ignore[arg-type]


def argv(spec: SandboxSpec | None = None, **kw: object) -> list[str]:
    command = build_command(
        spec or make_spec(),
        runtimes_dir=RUNTIMES,
        bwrap="/usr/bin/bwrap",
        unsafe_no_sandbox=bool(kw.get("unsafe", False)),
        host=kw["host"] if isinstance(kw.get("host"), HostLayout) else HOST,  # type: ignore[arg-type]
        check=bool(kw.get("check", False)),
    )
    return list(command.argv)


def pairs(args: list[str], option: str) -> list[tuple[str, str]]:
    return [(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a == option]


def options(args: list[str]) -> list[str]:
    return args[: args.index("--")]


def inner(args: list[str]) -> list[str]:
    return args[args.index("--") + 1 :]


def test_starts_with_bwrap_and_unshares_everything() -> None:
    args = argv()
    assert args[0] == "/usr/bin/bwrap"
    opts = options(args)
    for flag in (
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ):
        assert flag in opts
    assert "--share-net" not in opts


def test_network_shared_only_when_asked() -> None:
    opts = options(argv(make_spec(network=True)))
    assert "--share-net" in opts
    assert ("/etc/resolv.conf", "/etc/resolv.conf") in pairs(opts, "--ro-bind-try")


def test_uid_gid_and_capabilities() -> None:
    opts = options(argv())
    assert opts[opts.index("--uid") + 1] == "65534"
    assert opts[opts.index("--gid") + 1] == "65534"
    assert opts[opts.index("--cap-drop") + 1] == "ALL"
    assert "--cap-add" not in opts


def test_environment_is_exactly_ours_plus_the_functions() -> None:
    opts = options(argv())
    env = dict(pairs(opts, "--setenv"))
    assert opts.index("--clearenv") < opts.index("--setenv")
    assert env["GREETING"] == "hi"
    assert env["DB_PASSWORD"] == "s3cret"
    assert env["SLESS_SOCKET"] == "/run/sless/worker.sock"
    assert env["SLESS_CODE_DIR"] == "/code"
    assert env["SLESS_DEPS_DIR"] == "/deps"
    assert env["SLESS_ENTRYPOINT"] == "handler.handle"
    assert env["SLESS_FUNCTION"] == "fn1"
    assert env["SLESS_NAMESPACE"] == "ns1"
    assert env["SLESS_TIMEOUT_S"] == "10"
    assert env["SLESS_CONCURRENCY"] == "2"
    assert env["HOME"] == "/tmp"
    assert set(env) == {
        "GREETING",
        "DB_PASSWORD",
        "SLESS_SOCKET",
        "SLESS_CODE_DIR",
        "SLESS_DEPS_DIR",
        "SLESS_ENTRYPOINT",
        "SLESS_FUNCTION",
        "SLESS_NAMESPACE",
        "SLESS_TIMEOUT_S",
        "SLESS_CONCURRENCY",
        "HOME",
        "TMPDIR",
        "PATH",
        "LANG",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "MALLOC_ARENA_MAX",
    }


def test_filesystem_binds() -> None:
    opts = options(argv())
    ro = pairs(opts, "--ro-bind")
    assert ("/usr", "/usr") in ro
    assert ("/lib64", "/lib64") in ro
    assert ("/opt/pyenv/versions/3.11.7", "/opt/pyenv/versions/3.11.7") in ro
    assert ("/srv/sless/runtimes/python3.11", "/runtime") in ro
    assert ("/data/code/abc", "/code") in ro
    assert ("/data/deps/abc", "/deps") in ro
    assert pairs(opts, "--bind") == [("/run/sless/ns1.fn1.vdeadbeef.0", "/run/sless")]
    assert ("usr/lib", "/lib") in pairs(opts, "--symlink")
    # only our own passwd/group, never the host's
    sources = dict((dst, src) for src, dst in ro)
    assert sources["/etc/passwd"].endswith("sless/sandbox/etc/passwd")
    assert sources["/etc/group"].endswith("sless/sandbox/etc/group")
    assert not any(src in ("/", "/etc", "/root", "/home") for src, _ in ro)
    assert (opts[opts.index("--proc") + 1], opts[opts.index("--dev") + 1]) == ("/proc", "/dev")


def test_tmp_is_a_sized_tmpfs_and_root_is_read_only() -> None:
    opts = options(argv())
    i = next(i for i, a in enumerate(opts) if a == "--tmpfs" and opts[i + 1] == "/tmp")
    assert opts[i - 2 : i] == ["--size", str(16 * 1024 * 1024)]
    last = len(opts) - 1 - opts[::-1].index("--remount-ro")
    assert opts[last + 1] == "/"
    # the remount of the root comes after every mount
    assert last > max(i for i, a in enumerate(opts) if a.endswith("bind"))


def test_no_deps_dir_means_no_deps_mount() -> None:
    opts = options(argv(make_spec(deps_dir=None)))
    assert "/deps" not in [dst for _, dst in pairs(opts, "--ro-bind")]
    assert "SLESS_DEPS_DIR" not in dict(pairs(opts, "--setenv"))


def test_rlimits_via_prlimit_inside_the_sandbox() -> None:
    cmd = inner(argv())
    assert cmd[0] == "/usr/bin/prlimit"
    limits = cmd[1 : cmd.index("--")]
    mib = 1024 * 1024
    assert limits == [
        f"--as={(128 + 128 + 8 * 2) * mib}",
        "--nproc=32",
        "--nofile=128",
        "--core=0",
        f"--fsize={16 * mib}",
        "--cpu=60",
    ]


def test_no_cpu_limit_when_unset() -> None:
    spec = make_spec(limits=Limits(memory_mb=64, cpu_seconds=None))
    assert not [a for a in inner(argv(spec)) if a.startswith("--cpu")]


def test_python_interpreter_is_isolated() -> None:
    cmd = inner(argv())
    python = cmd[cmd.index("--") + 1 :]
    assert python == [
        "/opt/pyenv/versions/3.11.7/bin/python3.11",
        "-I",
        "-S",
        "-u",
        "-B",
        "/runtime/server.py",
    ]


def test_check_mode_appends_flag() -> None:
    assert argv(check=True)[-1] == "--check"


def test_node_runtime() -> None:
    spec = make_spec(runtime="nodejs20", limits=Limits(memory_mb=256))
    args = argv(spec)
    cmd = inner(args)
    assert cmd[cmd.index("--") + 1 :] == [
        "/usr/bin/node",
        "--max-old-space-size=256",
        "/runtime/server.js",
    ]
    assert ("/srv/sless/runtimes/nodejs20", "/runtime") in pairs(options(args), "--ro-bind")
    # node lives under /usr here: no extra prefix, and never the python prefix
    assert "/opt/pyenv/versions/3.11.7" not in options(args)
    assert address_space_mb(spec) == 256 + 1024


def test_unsafe_mode_runs_the_runtime_directly_with_a_scrubbed_env() -> None:
    command = build_command(
        make_spec(), runtimes_dir=RUNTIMES, bwrap="bwrap", unsafe_no_sandbox=True, host=HOST
    )
    assert command.argv[0] == "/usr/bin/prlimit"
    assert "bwrap" not in command.argv
    assert command.argv[-1] == "/srv/sless/runtimes/python3.11/server.py"
    assert command.env["SLESS_CODE_DIR"] == "/data/code/abc"
    assert command.env["SLESS_SOCKET"] == "/run/sless/ns1.fn1.vdeadbeef.0/worker.sock"
    assert "SLESS_ADMIN_TOKEN" not in command.env


def test_sandboxed_command_has_an_empty_process_environment() -> None:
    command = build_command(
        make_spec(), runtimes_dir=RUNTIMES, bwrap="bwrap", unsafe_no_sandbox=False, host=HOST
    )
    assert command.env == {}


@pytest.mark.parametrize(
    "overrides",
    [
        {"name": "../escape"},
        {"name": "a/b"},
        {"name": ""},
        {"runtime": "ruby"},
        {"code_dir": Path("relative")},
        {"env": {"SLESS_ADMIN_TOKEN": "x"}},
        {"env": {"PATH": "/evil"}},
        {"env": {"BAD-NAME": "x"}},
        {"env": {"A": "nul\0byte"}},
        {"concurrency": 0},
        {"timeout_s": 0},
    ],
)
def test_invalid_specs_are_refused(overrides: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"must|reserved|invalid|NUL"):
        make_spec(**overrides)


def test_spec_env_is_a_private_copy() -> None:
    env = {"A": "1"}
    spec = make_spec(env=env)
    env["B"] = "2"
    assert dict(spec.env) == {"A": "1"}


def test_a_prestarted_worker_gets_no_function_and_sets_its_own_address_space() -> None:
    args = argv(make_spec(prestarted=True, env={}))
    env = dict(pairs(options(args), "--setenv"))
    assert env["SLESS_SOCKET"] == "/run/sless/worker.sock"
    assert env["SLESS_CODE_DIR"] == "/code"
    assert not {"SLESS_FUNCTION", "SLESS_NAMESPACE", "SLESS_ENTRYPOINT"} & set(env)
    command = inner(args)
    assert not any(a.startswith("--as=") for a in command)
    assert any(a.startswith("--nproc=") for a in command)
    assert command[-1] == "--prestarted"
    # the same sandbox as any worker: every namespace unshared, code read-only
    assert "--unshare-all" in options(args)
    assert ("/data/code/abc", "/code") in pairs(options(args), "--ro-bind")


def test_proc_is_masked_and_read_only_as_runc_does() -> None:
    """runc's maskedPaths read as an unreadable empty file or an empty read-only tmpfs;
    its readonlyPaths (/proc/sys first: core_pattern, file-max...) are bound read-only,
    all after the sandbox's own /proc and /dev are mounted."""
    opts = options(argv())
    binds = pairs(opts, "--ro-bind")
    for name in ("sys", "sysrq-trigger", "bus", "fs", "irq"):
        assert (f"/proc/{name}", f"/proc/{name}") in binds
    for name in ("kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug"):
        assert ("/dev/null", f"/proc/{name}") in binds
    for name in ("acpi", "asound", "scsi"):
        i = next(i for i, a in enumerate(opts) if a == "--tmpfs" and opts[i + 1] == f"/proc/{name}")
        assert opts[i + 2 : i + 4] == ["--remount-ro", f"/proc/{name}"]
    first_cover = min(i for i, a in enumerate(opts) if a.startswith("/proc/"))
    assert opts.index("--proc") < opts.index("--dev") < first_cover
    assert not any(a.startswith("/sys") for a in opts)


def test_only_the_proc_entries_this_kernel_has_are_covered() -> None:
    host = HostLayout(**{**HOST.__dict__, "proc_entries": frozenset({"sys", "kcore"})})
    opts = options(argv(host=host))
    covered = [dst for dst in opts if dst.startswith("/proc/")]
    assert covered == ["/proc/sys", "/proc/sys", "/proc/kcore"]


@pytest.mark.parametrize(
    ("uid", "gid"), [(0, 100_000_000), (100_000_000, 0), (65534, 65534), (999, 5000)]
)
def test_host_ids_are_never_root_nor_a_system_or_shared_id(uid: int, gid: int) -> None:
    with pytest.raises(ValueError, match="unprivileged host id"):
        HostIds(uid=uid, gid=gid)


def test_a_spec_carries_its_tenants_host_ids() -> None:
    ids = HostIds(uid=100_000_007, gid=100_000_007)
    assert make_spec(host_ids=ids).host_ids == ids
    assert make_spec().host_ids is None
